import { bodyBytes, type ResponseBody } from '../contract/stored-body.js';

/** A body held as a string or bytes: the string as it is, bytes copied, as `arrayBuffer()` gives, so later writes to the handler's buffer stay out of the record. */
function asContent(body: unknown): ResponseBody | undefined {
  if (typeof body === 'string') return body;
  // Copied by the constructor: a Buffer's slice() is a view of the same memory.
  return body instanceof Uint8Array ? new Uint8Array(body) : undefined;
}

/** Node's registered symbol for a stream read from or cancelled: read directly, as `bodyUsed` costs more than the rest of the capture. */
const DISTURBED = Symbol.for('nodejs.stream.disturbed');

/** The symbol each slot was last found under: a runtime keys every object of a class with the same one. */
const found = new Map<string, symbol>();

/** The own symbol-keyed slot of `target` described `description`, if any; scanned only when the last symbol found is not there. */
function slot(target: Request | Response, description: string): unknown {
  const known = found.get(description);
  if (known !== undefined && Object.hasOwn(target, known)) return (target as unknown as Record<symbol, unknown>)[known];
  for (const symbol of Object.getOwnPropertySymbols(target)) {
    if (symbol.description === description) {
      found.set(description, symbol);
      return (target as unknown as Record<symbol, unknown>)[symbol];
    }
  }
  return undefined;
}

/** What undici keeps of a Request's or Response's body, next to its stream. */
type UndiciState = { body?: { source?: unknown; stream?: ReadableStream & { [DISTURBED]?: boolean } } | null };

/** undici's state of `target`, if it is an undici Request or Response (which never holds a lightweight `cache`). */
function undiciState(target: Request | Response): UndiciState | undefined {
  const state = slot(target, 'state');
  return typeof state === 'object' && state !== null ? (state as UndiciState) : undefined;
}

/** What @hono/node-server's lightweight Response holds until a Web member is read: `[status, body, headers]`. */
function cacheOf(response: Request | Response): readonly [number, unknown, unknown] | undefined {
  const cache = slot(response, 'cache');
  return Array.isArray(cache) && cache.length === 3 && typeof cache[0] === 'number' ? (cache as [number, unknown, unknown]) : undefined;
}

/** {@link cacheOf}, asked only of what is not an undici object (looked up without a scan). */
const lightweightCache = (response: Response) => (undiciState(response) === undefined ? cacheOf(response) : undefined);

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
 * The body of a Response that was built from a string or bytes and not read yet, taken from where
 * the runtime keeps them, so the Response stays unread and can go to the client as it is:
 * `@hono/node-server`'s lightweight Response keeps `[status, body, headers]` under a symbol
 * described `cache` until a Web member is read (reading `arrayBuffer()` would turn it into an undici
 * Response); undici's keeps its body's `source` next to the stream under `state`, a Request's as a
 * Response's. Anything else (a stream, a Blob, a body already read, another runtime) is `undefined`:
 * read it the standard way.
 */
export function unreadContent(response: Request | Response): ResponseBody | undefined {
  const state = undiciState(response);
  if (state === undefined) {
    const cache = cacheOf(response);
    if (cache === undefined) return undefined;
    return cache[1] === null ? new Uint8Array(0) : asContent(cache[1]);
  }
  const { body } = state;
  if (body === null || body === undefined) return new Uint8Array(0);
  // What `bodyUsed` reports, read from the stream: locked, read from or cancelled means the bytes are not all there to take.
  const stream = body.stream;
  if (stream === undefined || stream.locked || stream[DISTURBED] !== false) return undefined;
  return asContent(body.source);
}

/** {@link unreadContent} as bytes (a request's body is parsed from its bytes). */
export function unreadBody(request: Request | Response): Uint8Array | undefined {
  const content = unreadContent(request);
  return content === undefined ? undefined : bodyBytes(content);
}
