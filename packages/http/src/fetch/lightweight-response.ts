const encoder = new TextEncoder();

/**
 * The body of `@hono/node-server`'s lightweight Response, read without turning it into an undici one.
 * It keeps `[status, body, headers]` under a symbol described `cache` until a Web member (`body`,
 * `arrayBuffer()`) is read; `c.json()`, `c.text()` and `new Response(string | Uint8Array)` leave
 * the body there as it is. Anything else (another runtime, a stream, a Blob) is `undefined`, and the
 * caller reads the Response the standard way.
 */
export function lightweightBody(response: Response): Uint8Array | undefined {
  for (const symbol of Object.getOwnPropertySymbols(response)) {
    if (symbol.description !== 'cache') continue;
    const cache = (response as unknown as Record<symbol, unknown>)[symbol];
    if (!Array.isArray(cache) || cache.length !== 3 || typeof cache[0] !== 'number') return undefined;
    const body: unknown = cache[1];
    if (typeof body === 'string') return encoder.encode(body);
    // A copy, as arrayBuffer() gives: the stored record must not follow later writes to the handler's buffer.
    if (body instanceof Uint8Array) return body.slice();
    return body === null ? new Uint8Array(0) : undefined;
  }
  return undefined;
}
