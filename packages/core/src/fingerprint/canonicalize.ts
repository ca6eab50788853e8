import { OncelyError } from '../errors.js';

/** Matches a UTF-16 surrogate that is not part of a pair (the `u` flag keeps pairs whole). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
/** A character `JSON.stringify` would escape: quote, backslash, control character, lone surrogate. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const NEEDS_ESCAPE = /["\\\u0000-\u001f]|[\uD800-\uDFFF]/u;

/**
 * How deeply arrays and objects may nest by default. Serializing recurses once per level, and Node's
 * default stack ends somewhere past 2,000 levels: a body nested deeper is refused with a coded error
 * instead of a RangeError. Real payloads nest a few levels; Jackson and many JSON parsers cap at 1,000.
 */
export const DEFAULT_MAX_DEPTH = 512;

/** Options of {@link canonicalize}. */
export interface CanonicalizeOptions {
  /** Deepest nesting of arrays and objects accepted (default {@link DEFAULT_MAX_DEPTH}; `[]` is depth 1). */
  readonly maxDepth?: number;
}

/**
 * Serializes a JSON value in the RFC 8785 JSON Canonicalization Scheme (JCS): object members sorted
 * by UTF-16 code units, no whitespace, ECMAScript number and string serialization.
 *
 * Defined for JavaScript values: object properties whose value is `undefined` are omitted (as in
 * `JSON.stringify`); `toJSON` is honoured (a `Date` becomes its ISO string); boxed primitives are
 * unboxed. Everything that has no faithful JSON form throws an {@link OncelyError} with code
 * `invalid_request_payload` instead of being silently dropped: NaN, ±Infinity, BigInt, functions,
 * symbols, `undefined` outside an object property (array holes included), lone surrogates,
 * Map/Set/typed arrays, cycles; so does nesting deeper than `maxDepth`.
 */
export function canonicalize(value: unknown, options: CanonicalizeOptions = {}): string {
  return serialize(value, { ancestors: new Set(), path: [], maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH });
}

/** State of one traversal: the objects being serialized (to find cycles) and where we are. */
interface Walk {
  readonly ancestors: Set<object>;
  /** Member names and array indexes from the root; the `$.a[0]` text is built only for an error. */
  readonly path: (string | number)[];
  readonly maxDepth: number;
}

/** Enters one more array or object: `path` holds one segment per level below the root. */
function enter(value: object, walk: Walk): void {
  if (walk.ancestors.size >= walk.maxDepth) {
    throw new OncelyError(
      'invalid_request_payload',
      `oncely: the request payload nests arrays and objects deeper than ${walk.maxDepth} levels`,
    );
  }
  walk.ancestors.add(value);
}

function pathText(path: readonly (string | number)[]): string {
  let text = '$';
  for (const segment of path) text += typeof segment === 'number' ? `[${segment}]` : `.${segment}`;
  return text;
}

function serialize(value: unknown, walk: Walk): string {
  switch (typeof value) {
    case 'string':
      return quote(value, walk);
    case 'number':
      if (!Number.isFinite(value)) throw notJson(walk, `${value} is not a finite number`);
      // RFC 8785 §3.2.2.3 is ECMAScript's Number::toString, which also writes -0 as 0.
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      return serializeObject(value, walk);
    case 'bigint':
      throw notJson(walk, 'a BigInt has no JSON form (send it as a string)');
    case 'undefined':
      throw notJson(walk, 'undefined has no JSON form');
    default:
      throw notJson(walk, `a ${typeof value} has no JSON form`);
  }
}

function serializeObject(value: object, walk: Walk): string {
  if (walk.ancestors.has(value)) throw notJson(walk, 'the value contains a cycle');
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return serialize((value as { toJSON(key: string): unknown }).toJSON(''), walk);
  }
  if (Array.isArray(value)) return serializeArray(value, walk);
  if (!isPlainObject(value)) {
    if (value instanceof Number || value instanceof String || value instanceof Boolean) {
      return serialize(value.valueOf(), walk);
    }
    rejectNonPlain(value, walk);
  }
  return serializeMembers(value, walk);
}

/** An object literal or `Object.create(null)`: never a boxed primitive, collection or buffer. */
function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function serializeArray(items: readonly unknown[], walk: Walk): string {
  enter(items, walk);
  let text = '[';
  for (let index = 0; index < items.length; index++) {
    walk.path.push(index);
    text += (index === 0 ? '' : ',') + serialize(items[index], walk);
    walk.path.pop();
  }
  walk.ancestors.delete(items);
  return `${text}]`;
}

function serializeMembers(value: object, walk: Walk): string {
  enter(value, walk);
  let text = '';
  for (const name of sortedKeys(value)) {
    const member = (value as Record<string, unknown>)[name];
    if (member === undefined) continue;
    walk.path.push(name);
    text += `${text === '' ? '' : ','}${quote(name, walk)}:${serialize(member, walk)}`;
    walk.path.pop();
  }
  walk.ancestors.delete(value);
  return `{${text}}`;
}

/**
 * Own enumerable keys in UTF-16 code-unit order (what `<` and `Array#sort` compare). A request's
 * objects have a handful of keys, where an insertion sort costs a fraction of `Array#sort`'s setup.
 */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i;
    for (; j > 0 && keys[j - 1]! > key; j--) keys[j] = keys[j - 1]!;
    keys[j] = key;
  }
  return keys;
}

function rejectNonPlain(value: object, walk: Walk): void {
  const kind =
    value instanceof Map
      ? 'Map'
      : value instanceof Set
        ? 'Set'
        : value instanceof WeakMap || value instanceof WeakSet
          ? 'weak collection'
          : ArrayBuffer.isView(value) || value instanceof ArrayBuffer
            ? 'binary buffer'
            : value instanceof RegExp
              ? 'RegExp'
              : value instanceof Promise
                ? 'Promise'
                : undefined;
  if (kind) throw notJson(walk, `a ${kind} has no faithful JSON form`);
}

/** `JSON.stringify` of a string, skipped when nothing needs escaping (the common case). */
function quote(text: string, walk: Walk): string {
  if (!NEEDS_ESCAPE.test(text)) return `"${text}"`;
  if (LONE_SURROGATE.test(text)) throw notJson(walk, 'the string contains a lone UTF-16 surrogate');
  return JSON.stringify(text);
}

function notJson(walk: Walk, reason: string): OncelyError {
  return new OncelyError(
    'invalid_request_payload',
    `oncely: the request payload is not JSON at ${pathText(walk.path)}: ${reason}`,
  );
}
