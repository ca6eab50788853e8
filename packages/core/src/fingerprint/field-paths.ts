import { OncelyError } from '../errors.js';
import { canonicalize, DEFAULT_MAX_DEPTH } from './canonicalize.js';

/**
 * A field path: `'customer.id'`, or segments `['customer', 'id']` when a name contains a dot.
 * A path that crosses an array applies to every element (`'items.sku'`).
 */
export type FieldPath = string | readonly string[];

type PathTree = Map<string, PathTree | true>;

function toSegments(path: FieldPath): readonly string[] {
  return typeof path === 'string' ? path.split('.') : path;
}

function buildTree(paths: readonly FieldPath[]): PathTree {
  const root: PathTree = new Map();
  for (const path of paths) {
    let node = root;
    const segments = toSegments(path);
    segments.forEach((segment, index) => {
      const existing = node.get(segment);
      if (existing === true) return;
      if (index === segments.length - 1) {
        node.set(segment, true);
        return;
      }
      const child: PathTree = existing ?? new Map();
      node.set(segment, child);
      node = child;
    });
  }
  return root;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Defines an own property even for the name `__proto__`, which plain assignment would not. */
function setOwn(target: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}

/** Arrays nest without consuming a path segment: their depth is bounded like canonicalize's. */
function descend(depth: number, maxDepth: number): number {
  if (depth >= maxDepth) {
    throw new OncelyError('invalid_request_payload', `oncely: the request payload nests arrays and objects deeper than ${maxDepth} levels`);
  }
  return depth + 1;
}

function pick(value: unknown, tree: PathTree, depth: number, maxDepth: number): unknown {
  if (Array.isArray(value)) {
    const next = descend(depth, maxDepth);
    return value.map((item) => pick(item, tree, next, maxDepth));
  }
  if (!isRecord(value)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [name, child] of tree) {
    if (!Object.hasOwn(value, name)) continue;
    const picked = child === true ? value[name] : pick(value[name], child, descend(depth, maxDepth), maxDepth);
    if (picked !== undefined) setOwn(out, name, picked);
  }
  return out;
}

function omit(value: unknown, tree: PathTree, depth: number, maxDepth: number): unknown {
  if (Array.isArray(value)) {
    const next = descend(depth, maxDepth);
    return value.map((item) => omit(item, tree, next, maxDepth));
  }
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = { ...value };
  for (const [name, child] of tree) {
    if (!Object.hasOwn(out, name)) continue;
    if (child === true) delete out[name];
    else setOwn(out, name, omit(out[name], child, descend(depth, maxDepth), maxDepth));
  }
  return out;
}

function omitIfDefault(value: unknown, segments: readonly string[], fallback: string, depth: number, maxDepth: number): unknown {
  if (Array.isArray(value)) {
    const next = descend(depth, maxDepth);
    return value.map((item) => omitIfDefault(item, segments, fallback, next, maxDepth));
  }
  if (!isRecord(value) || segments.length === 0) return value;
  const [name, ...rest] = segments as [string, ...string[]];
  if (!Object.hasOwn(value, name)) return value;
  const out: Record<string, unknown> = { ...value };
  if (rest.length > 0) setOwn(out, name, omitIfDefault(out[name], rest, fallback, descend(depth, maxDepth), maxDepth));
  else if (out[name] !== undefined && canonicalize(out[name], { maxDepth: maxDepth - depth }) === fallback) delete out[name];
  return out;
}

/** Keeps only the named paths (and the containers on the way to them); nesting past `maxDepth` is refused. */
export function selectPaths(value: unknown, paths: readonly FieldPath[], maxDepth = DEFAULT_MAX_DEPTH): unknown {
  return pick(value, buildTree(paths), 0, maxDepth);
}

/** Drops the named paths, keeping everything else; nesting past `maxDepth` is refused. */
export function excludePaths(value: unknown, paths: readonly FieldPath[], maxDepth = DEFAULT_MAX_DEPTH): unknown {
  return omit(value, buildTree(paths), 0, maxDepth);
}

/** Drops fields whose value equals the declared default, so "omitted" and "sent the default" agree. */
export function omitDefaults(value: unknown, defaults: Readonly<Record<string, unknown>>, maxDepth = DEFAULT_MAX_DEPTH): unknown {
  let out = value;
  for (const [path, fallback] of Object.entries(defaults)) {
    out = omitIfDefault(out, toSegments(path), canonicalize(fallback), 0, maxDepth);
  }
  return out;
}
