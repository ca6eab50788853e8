const encoder = new TextEncoder();

/** A body held as a string or bytes, as bytes; a copy, as `arrayBuffer()` gives, so later writes to the handler's buffer stay out of the record. */
function asBytes(body: unknown): Uint8Array | undefined {
  if (typeof body === 'string') return encoder.encode(body);
  return body instanceof Uint8Array ? body.slice() : undefined;
}

/** The own symbol-keyed slot of `response` described `description`, if any. */
function slot(response: Request | Response, description: string): unknown {
  for (const symbol of Object.getOwnPropertySymbols(response)) {
    if (symbol.description === description) return (response as unknown as Record<symbol, unknown>)[symbol];
  }
  return undefined;
}

/** What @hono/node-server's lightweight Response holds until a Web member is read: `[status, body, headers]`. */
function lightweightCache(response: Response): readonly [number, unknown, unknown] | undefined {
  const cache = slot(response, 'cache');
  return Array.isArray(cache) && cache.length === 3 && typeof cache[0] === 'number' ? (cache as [number, unknown, unknown]) : undefined;
}

/** @hono/node-server's content type for a body given without headers. */
const DEFAULT_CONTENT_TYPE = 'text/plain; charset=UTF-8';

/**
 * The headers a lightweight Response (see {@link unreadBody}) still holds as a plain record, with
 * lowercased names as `Headers` would report them; reading `response.headers` instead would build a
 * `Headers` in its place, and then @hono/node-server sends it on its slower path. `undefined` when it
 * holds a `Headers`, a list, or anything a `Headers` would report differently (a name twice in two
 * cases, a value with surrounding whitespace, not a string).
 */
export function unreadHeaders(response: Response): Record<string, string | readonly string[]> | undefined {
  const cache = lightweightCache(response);
  if (!cache) return undefined;
  const [, body, held] = cache;
  if (held === undefined || held === null) return body === null ? {} : { 'content-type': DEFAULT_CONTENT_TYPE };
  if (typeof held !== 'object' || held instanceof Headers || Array.isArray(held)) return undefined;
  const out: Record<string, string | readonly string[]> = {};
  for (const name in held) {
    const value = (held as Record<string, unknown>)[name];
    const lower = name.toLowerCase();
    if (typeof value !== 'string' || value !== value.trim() || lower in out) return undefined;
    out[lower] = lower === 'set-cookie' ? [value] : value;
  }
  return out;
}

/**
 * The bytes of a Response that was built from a string or bytes and not read yet, taken from where
 * the runtime keeps them, so the Response stays unread and can go to the client as it is:
 * `@hono/node-server`'s lightweight Response keeps `[status, body, headers]` under a symbol
 * described `cache` until a Web member is read (reading `arrayBuffer()` would turn it into an undici
 * Response); undici's keeps its body's `source` next to the stream under `state`, a Request's as a
 * Response's. Anything else (a stream, a Blob, a body already read, another runtime) is `undefined`:
 * read it the standard way.
 */
export function unreadBody(response: Request | Response): Uint8Array | undefined {
  const cache = slot(response, 'cache');
  if (Array.isArray(cache)) {
    if (cache.length !== 3 || typeof cache[0] !== 'number') return undefined;
    return cache[1] === null ? new Uint8Array(0) : asBytes(cache[1]);
  }
  if (response.bodyUsed) return undefined;
  const state = slot(response, 'state') as { body?: { source?: unknown; stream?: ReadableStream } | null } | undefined;
  if (typeof state !== 'object' || state === null) return undefined;
  const { body } = state;
  if (body === null || body === undefined) return new Uint8Array(0);
  if (body.stream?.locked !== false) return undefined;
  return asBytes(body.source);
}
