const encoder = new TextEncoder();

/** Lowercase hex SHA-256 of the UTF-8 bytes of `text`, through Web Crypto (Node, Bun, Deno, browsers). */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(text));
  let hex = '';
  for (const byte of new Uint8Array(digest)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** The form in which keys reach logs, events and metrics: a short SHA-256 prefix, never the key. */
export async function keyHash(key: string): Promise<string> {
  return (await sha256Hex(key)).slice(0, 16);
}
