import type { FieldPath, FingerprintOptions } from '@oncely/core';

/** Which body fields bind a key to its request; transport fields (trace ids) should never enter. */
export interface BodyFingerprintOptions {
  /** Keep only these body paths (`'amount'`, `'customer.id'`, or segments `['a.b', 'c']`). */
  readonly select?: readonly FieldPath[];
  /** Drop these body paths (applied after `select`). */
  readonly exclude?: readonly FieldPath[];
  /** Body path → default value: a field equal to its default counts as omitted. */
  readonly defaults?: Readonly<Record<string, unknown>>;
}

/** What core fingerprints for one HTTP request, and the options that reach inside its body. */
export interface RequestFingerprint {
  readonly request: unknown;
  readonly options: FingerprintOptions;
}

/** Parts of the request outside the body that always enter the fingerprint. */
const TARGET_FIELDS = ['method', 'path', 'query'] as const;

const inBody = (path: FieldPath): readonly string[] => ['body', ...(typeof path === 'string' ? path.split('.') : path)];

/**
 * The fingerprinted request: `{ method, path, query, body }`. Method, path and query always count
 * (the same key sent to `/orders/1` and `/orders/2` is not a retry); `select`, `exclude` and
 * `defaults` apply inside the parsed body.
 */
export function requestFingerprint(
  method: string,
  url: string,
  body: unknown,
  options: BodyFingerprintOptions,
): RequestFingerprint {
  const parsed = new URL(url, 'http://localhost');
  const query = searchParamsObject(parsed.searchParams);
  const request = { method: method.toUpperCase(), path: parsed.pathname, query, body };
  const fingerprint: { -readonly [K in keyof FingerprintOptions]: FingerprintOptions[K] } = {};
  if (options.select) fingerprint.select = [...TARGET_FIELDS, ...options.select.map(inBody)];
  if (options.exclude) fingerprint.exclude = options.exclude.map(inBody);
  if (options.defaults) {
    fingerprint.defaults = Object.fromEntries(Object.entries(options.defaults).map(([path, value]) => [`body.${path}`, value]));
  }
  return { request, options: fingerprint };
}

/** Query parameters as an object; a repeated name becomes an array; empty → undefined (omitted). */
export function searchParamsObject(params: URLSearchParams): Record<string, string | string[]> | undefined {
  const out: Record<string, string | string[]> = Object.create(null);
  let empty = true;
  for (const [name, value] of params) {
    empty = false;
    const existing = out[name];
    out[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  return empty ? undefined : out;
}

/** A binary body enters the fingerprint as its SHA-256, not as bytes. */
export async function bytesFingerprint(bytes: Uint8Array): Promise<{ readonly sha256: string }> {
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return { sha256: Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('') };
}

/** Maps a body a framework parsed (object, string, Buffer) to its fingerprint form. */
export async function parsedBodyFingerprint(body: unknown): Promise<unknown> {
  return body instanceof Uint8Array ? bytesFingerprint(body) : body;
}
