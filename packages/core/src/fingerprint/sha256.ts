const encoder = new TextEncoder();

type HashFactory = (algorithm: 'sha256') => { update(text: string, encoding: 'utf8'): { digest(encoding: 'hex'): string } };

/**
 * Node's own hash, found without a static import so bundles for browsers never see `node:crypto`
 * (Node ≥ 20.16, Bun and Deno expose `process.getBuiltinModule`). It is about 20× cheaper than an
 * asynchronous Web Crypto digest, which every request would otherwise pay twice.
 */
const nodeCreateHash: HashFactory | undefined = (() => {
  try {
    const processLike = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    const crypto = processLike?.getBuiltinModule?.('node:crypto') as { createHash?: HashFactory } | undefined;
    return typeof crypto?.createHash === 'function' ? crypto.createHash : undefined;
  } catch {
    return undefined;
  }
})();

async function webCryptoSha256Hex(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(text));
  let hex = '';
  for (const byte of new Uint8Array(digest)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** Lowercase hex SHA-256 of the UTF-8 bytes of `text`: Node's hash where available, else Web Crypto. */
export async function sha256Hex(text: string): Promise<string> {
  return nodeCreateHash ? nodeCreateHash('sha256').update(text, 'utf8').digest('hex') : webCryptoSha256Hex(text);
}

/** The Web Crypto path, exported for tests that prove both paths agree. */
export const sha256HexWebCrypto = webCryptoSha256Hex;

/** The form in which keys reach logs, events and metrics: a short SHA-256 prefix, never the key. */
export async function keyHash(key: string): Promise<string> {
  return (await sha256Hex(key)).slice(0, 16);
}
