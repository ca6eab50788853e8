import { OncelyError } from '../errors.js';

/** Matches a UTF-16 surrogate that is not part of a pair (the `u` flag keeps pairs whole). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Serializes a JSON value in the RFC 8785 JSON Canonicalization Scheme (JCS): object members sorted
 * by UTF-16 code units, no whitespace, ECMAScript number and string serialization.
 *
 * Defined for JavaScript values: object properties whose value is `undefined` are omitted (as in
 * `JSON.stringify`); `toJSON` is honoured (a `Date` becomes its ISO string); boxed primitives are
 * unboxed. Everything that has no faithful JSON form throws an {@link OncelyError} with code
 * `invalid_request_payload` instead of being silently dropped: NaN, ±Infinity, BigInt, functions,
 * symbols, `undefined` outside an object property, lone surrogates, Map/Set/typed arrays, cycles.
 */
export function canonicalize(value: unknown): string {
  return serialize(value, ROOT, new Set());
}

/** Where a value sits, as a linked list: the `$.a[0]` text is built only for an error message. */
interface Path {
  readonly parent?: Path;
  readonly segment: string | number;
}
const ROOT: Path = { segment: '$' };

function pathText(path: Path): string {
  let text = '';
  for (let at: Path | undefined = path; at; at = at.parent) {
    const segment = at.segment;
    text = (typeof segment === 'number' ? `[${segment}]` : at.parent ? `.${segment}` : segment) + text;
  }
  return text;
}

function serialize(value: unknown, path: Path, ancestors: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return quote(value, path);
    case 'number':
      if (!Number.isFinite(value)) throw notJson(path, `${value} is not a finite number`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      return serializeObject(value, path, ancestors);
    case 'bigint':
      throw notJson(path, 'a BigInt has no JSON form (send it as a string)');
    case 'undefined':
      throw notJson(path, 'undefined has no JSON form');
    default:
      throw notJson(path, `a ${typeof value} has no JSON form`);
  }
}

function serializeObject(value: object, path: Path, ancestors: Set<object>): string {
  if (ancestors.has(value)) throw notJson(path, 'the value contains a cycle');
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return serialize((value as { toJSON(key: string): unknown }).toJSON(''), path, ancestors);
  }
  if (value instanceof Number || value instanceof String || value instanceof Boolean) {
    return serialize(value.valueOf(), path, ancestors);
  }
  rejectNonPlain(value, path);
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      return `[${value.map((item, index) => serialize(item, { parent: path, segment: index }, ancestors)).join(',')}]`;
    }
    const members: string[] = [];
    for (const name of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[name];
      if (member === undefined) continue;
      const memberPath: Path = { parent: path, segment: name };
      members.push(`${quote(name, memberPath)}:${serialize(member, memberPath, ancestors)}`);
    }
    return `{${members.join(',')}}`;
  } finally {
    ancestors.delete(value);
  }
}

function rejectNonPlain(value: object, path: Path): void {
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
  if (kind) throw notJson(path, `a ${kind} has no faithful JSON form`);
}

function quote(text: string, path: Path): string {
  if (LONE_SURROGATE.test(text)) throw notJson(path, 'the string contains a lone UTF-16 surrogate');
  return JSON.stringify(text);
}

function notJson(path: Path, reason: string): OncelyError {
  return new OncelyError('invalid_request_payload', `oncely: the request payload is not JSON at ${pathText(path)}: ${reason}`);
}
