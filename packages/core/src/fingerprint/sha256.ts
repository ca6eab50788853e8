const encoder = /* @__PURE__ */ new TextEncoder();

/** The parts of `node:crypto` used here; Bun and Deno provide the same shape. */
export interface NodeCryptoLike {
  /** One-shot hash (Node ≥ 20.12 / 21.7): no Hash object, about 3× cheaper than `createHash`. */
  readonly hash?: (algorithm: 'sha256', data: string, outputEncoding: 'hex') => string;
  readonly createHash?: (algorithm: 'sha256') => {
    update(text: string, encoding: 'utf8'): { digest(encoding: 'hex'): string };
  };
}

/**
 * The fastest synchronous hex SHA-256 a `node:crypto`-like module offers: the one-shot `hash`, else
 * `createHash`; `undefined` when it has neither. Both hash the UTF-8 bytes of the text.
 */
export function nodeSha256Hex(crypto: NodeCryptoLike | undefined): ((text: string) => string) | undefined {
  const { hash, createHash } = crypto ?? {};
  if (typeof hash === 'function') return (text) => hash('sha256', text, 'hex');
  if (typeof createHash === 'function') return (text) => createHash('sha256').update(text, 'utf8').digest('hex');
  return undefined;
}

/**
 * Node's own hash, found without a static import so bundles for browsers never see `node:crypto`
 * (Node ≥ 20.16, Bun and Deno expose `process.getBuiltinModule`). It is synchronous and far cheaper
 * than an asynchronous Web Crypto digest, which every request's fingerprint would otherwise pay.
 */
// Marked pure so a bundle that never hashes (a browser page) drops it, and with it the `node:crypto` name.
const nodeSha256: ((text: string) => string) | undefined = /* @__PURE__ */ (() => {
  try {
    const processLike = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    return nodeSha256Hex(processLike?.getBuiltinModule?.('node:crypto') as NodeCryptoLike | undefined);
  } catch {
    return undefined;
  }
})();

/** Internal: true where digests are plain strings (Node's hash), so callers may hash lazily. */
export const hashesSynchronously = nodeSha256 !== undefined;

/** The Web Crypto path, exported for tests that prove every path agrees. */
export async function sha256HexWebCrypto(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(text));
  let hex = '';
  for (const byte of new Uint8Array(digest)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * Internal: the digest as a plain string where Node's hash exists, so the engine pays no promise on
 * Node; a promise of the Web Crypto digest elsewhere.
 */
export function sha256HexNow(text: string): string | Promise<string> {
  return nodeSha256 ? nodeSha256(text) : sha256HexWebCrypto(text);
}

/** Internal: {@link keyHash}, synchronous where Node's hash exists. */
export function keyHashNow(key: string): string | Promise<string> {
  const digest = sha256HexNow(key);
  return typeof digest === 'string' ? digest.slice(0, 16) : digest.then((hex) => hex.slice(0, 16));
}

/** Lowercase hex SHA-256 of the UTF-8 bytes of `text`: Node's hash where available, else Web Crypto. */
export async function sha256Hex(text: string): Promise<string> {
  return sha256HexNow(text);
}

/** The form in which keys reach logs, events and metrics: a short SHA-256 prefix, never the key. */
export async function keyHash(key: string): Promise<string> {
  return keyHashNow(key);
}
