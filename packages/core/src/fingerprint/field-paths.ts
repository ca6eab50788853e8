import { canonicalize } from './canonicalize.js';

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

function pick(value: unknown, tree: PathTree): unknown {
  if (Array.isArray(value)) return value.map((item) => pick(item, tree));
  if (!isRecord(value)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [name, child] of tree) {
    if (!Object.hasOwn(value, name)) continue;
    const picked = child === true ? value[name] : pick(value[name], child);
    if (picked !== undefined) setOwn(out, name, picked);
  }
  return out;
}

function omit(value: unknown, tree: PathTree): unknown {
  if (Array.isArray(value)) return value.map((item) => omit(item, tree));
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = { ...value };
  for (const [name, child] of tree) {
    if (!Object.hasOwn(out, name)) continue;
    if (child === true) delete out[name];
    else setOwn(out, name, omit(out[name], child));
  }
  return out;
}

function omitIfDefault(value: unknown, segments: readonly string[], fallback: string): unknown {
  if (Array.isArray(value)) return value.map((item) => omitIfDefault(item, segments, fallback));
  if (!isRecord(value) || segments.length === 0) return value;
  const [name, ...rest] = segments as [string, ...string[]];
  if (!Object.hasOwn(value, name)) return value;
  const out: Record<string, unknown> = { ...value };
  if (rest.length > 0) setOwn(out, name, omitIfDefault(out[name], rest, fallback));
  else if (out[name] !== undefined && canonicalize(out[name]) === fallback) delete out[name];
  return out;
}

/** Keeps only the named paths (and the containers on the way to them). */
export function selectPaths(value: unknown, paths: readonly FieldPath[]): unknown {
  return pick(value, buildTree(paths));
}

/** Drops the named paths, keeping everything else. */
export function excludePaths(value: unknown, paths: readonly FieldPath[]): unknown {
  return omit(value, buildTree(paths));
}

/** Drops fields whose value equals the declared default, so "omitted" and "sent the default" agree. */
export function omitDefaults(value: unknown, defaults: Readonly<Record<string, unknown>>): unknown {
  let out = value;
  for (const [path, fallback] of Object.entries(defaults)) {
    out = omitIfDefault(out, toSegments(path), canonicalize(fallback));
  }
  return out;
}
