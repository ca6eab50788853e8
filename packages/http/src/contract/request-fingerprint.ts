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

/** Parts of the request outside the body that always enter the fingerprint. */
const TARGET_FIELDS = ['method', 'path', 'query'] as const;

const inBody = (path: FieldPath): readonly string[] => ['body', ...(typeof path === 'string' ? path.split('.') : path)];

/**
 * A request target that URL parsing leaves as it is: a path of unreserved characters and slashes
 * (no dot segments, no `//` authority), and a query with nothing to percent-encode. Anything else
 * goes through `URL`, so both ways give the same path and query.
 */
const PLAIN_TARGET = /^(\/(?!\/)[A-Za-z0-9\-_~/]*)(?:\?([A-Za-z0-9\-_.~=&%+]*))?$/;

/** The path and query parameters of a request target (`/path?query`), as the WHATWG URL parser reads them after an origin. */
export function targetParts(url: string): { readonly path: string; readonly query: Record<string, string | string[]> | undefined } {
  const plain = PLAIN_TARGET.exec(url);
  if (plain) return { path: plain[1]!, query: plain[2] ? searchParamsObject(new URLSearchParams(plain[2])) : undefined };
  // An origin-form target is appended to an origin, so `//x` stays a path instead of naming a host.
  let parsed: URL;
  try {
    parsed = new URL(url.startsWith('/') ? `http://localhost${url}` : url, 'http://localhost');
  } catch {
    return { path: url, query: undefined };
  }
  return { path: parsed.pathname, query: searchParamsObject(parsed.searchParams) };
}

/**
 * The fingerprinted request: `{ method, path, query, body }`. Method, path and query always count
 * (the same key sent to `/orders/1` and `/orders/2` is not a retry).
 */
export function fingerprintedRequest(method: string, url: string, body: unknown): unknown {
  const { path, query } = targetParts(url);
  return { method: method.toUpperCase(), path, query, body };
}

/** Core's fingerprint options for a route: `select`, `exclude` and `defaults` apply inside the parsed body. */
export function bodyFingerprintOptions(options: BodyFingerprintOptions): FingerprintOptions {
  const fingerprint: { -readonly [K in keyof FingerprintOptions]: FingerprintOptions[K] } = {};
  if (options.select) fingerprint.select = [...TARGET_FIELDS, ...options.select.map(inBody)];
  if (options.exclude) fingerprint.exclude = options.exclude.map(inBody);
  if (options.defaults) {
    fingerprint.defaults = Object.fromEntries(Object.entries(options.defaults).map(([path, value]) => [`body.${path}`, value]));
  }
  return fingerprint;
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

/** Maps a body a framework parsed (object, string, Buffer) to its fingerprint form; only bytes need a promise. */
export function parsedBodyFingerprint(body: unknown): unknown {
  return body instanceof Uint8Array ? bytesFingerprint(body) : body;
}
