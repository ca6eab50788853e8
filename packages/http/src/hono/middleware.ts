import { type IdempotencyStore, OncelyError } from '@oncely/core';
import type { Context, MiddlewareHandler } from 'hono';
import { type ParsedBody, handleExchange } from '../contract/handle-exchange.js';
import { IDEMPOTENCY_KEY_HEADER } from '../contract/idempotency-key-header.js';
import { type IdempotencyContext, type IdempotencyHttpOptions, resolveOptions } from '../contract/options.js';
import { captureFetchResponse, type FetchCapture } from '../fetch/capture-response.js';
import { parseBodyBytes } from '../fetch/read-body.js';
import { toResponse } from '../fetch/to-response.js';
import { pathAndQuery } from '../fetch/with-idempotency.js';

/** Options of {@link honoIdempotency}: `scope`, `operation` and `validate` receive Hono's `Context`. */
export type HonoIdempotencyOptions<S extends IdempotencyStore = IdempotencyStore> = IdempotencyHttpOptions<Context, S>;

// On the context under a symbol: a WeakMap entry per request costs the collector more than a property.
const CONTEXT = Symbol('oncely.honoContext');
type WithContext = Context & { [CONTEXT]?: IdempotencyContext };
const UNKEYED: IdempotencyContext = Object.freeze({ kind: 'unkeyed' });

/**
 * The idempotency context of a request that went through {@link honoIdempotency}: the claim it
 * holds (in `transaction` mode, with the open transaction as `tx`), or `unkeyed`.
 */
export function honoIdempotencyContext<Tx = unknown>(c: Context): IdempotencyContext<Tx> {
  const context = (c as WithContext)[CONTEXT];
  if (!context) throw new OncelyError('invalid_option', 'oncely/http: honoIdempotency did not run for this request');
  return context as IdempotencyContext<Tx>;
}

/**
 * Reads the body through Hono's body cache, as its validators do, and leaves the bytes and text
 * there: the handler's `c.req.json()`, `text()`, `arrayBuffer()` or `parseBody()` read them
 * without a second pass over the stream (the raw request's own stream is then consumed).
 */
async function readHonoBody(c: Context): Promise<ParsedBody> {
  const { raw } = c.req;
  // Hono keeps promises there, whatever its type says.
  const bodyCache = c.req.bodyCache as Record<string, Promise<unknown> | undefined>;
  // Framing headers, not `raw.body`: on @hono/node-server reading `body` builds a full Request.
  const framed = c.req.header('content-length') !== undefined || c.req.header('transfer-encoding') !== undefined;
  if (raw.method === 'GET' || raw.method === 'HEAD' || !framed) return { kind: 'parsed', value: undefined };
  if (raw.bodyUsed && Object.keys(bodyCache).length === 0) {
    return { kind: 'malformed', detail: 'The request body was consumed before the idempotency middleware could read it.' };
  }
  const buffer = await c.req.arrayBuffer();
  return parseBodyBytes(new Uint8Array(buffer), raw.headers.get('content-type') ?? undefined, (text) => {
    bodyCache.text ??= Promise.resolve(text);
  });
}

/**
 * Hono middleware for one route (or a group, with `app.use`): the first request with a key runs
 * the rest of the chain once and stores the response it left in `c.res`; retries replay it.
 *
 * ```ts
 * app.post('/payments', honoIdempotency({ engine, operation: 'payments.create.v1', scope }), (c) => c.json({ id: 'pay_1' }, 201));
 * ```
 */
export function honoIdempotency<S extends IdempotencyStore>(options: HonoIdempotencyOptions<S>): MiddlewareHandler {
  const config = resolveOptions(options);
  return async (c, next) => {
    let capture: FetchCapture | undefined;
    const outcome = await handleExchange(
      config,
      {
        request: c,
        method: c.req.method,
        url: pathAndQuery(c.req.url),
        idempotencyKey: c.req.raw.headers.get(IDEMPOTENCY_KEY_HEADER) ?? undefined,
        body: () => readHonoBody(c),
        cancellation: c.req.raw,
      },
      async (context) => {
        (c as WithContext)[CONTEXT] = context;
        // A handler's error reaches Hono's onError inside next(); its response is what the policy sees.
        await next();
        capture = await captureFetchResponse(c.res);
        return capture.captured;
      },
    );
    switch (outcome.kind) {
      case 'unkeyed':
        (c as WithContext)[CONTEXT] = UNKEYED;
        await next();
        return;
      case 'original': {
        const sent = capture!.original(outcome.headers);
        if (sent === c.res) return;
        // Unset first: assigning over a response merges the old one's headers into the new.
        c.res = undefined;
        c.res = sent;
        return;
      }
      case 'reply':
        if (!capture) return toResponse(outcome.reply);
        // After next() Hono ignores a returned response: the handler's is replaced in place.
        c.res = undefined;
        c.res = toResponse(outcome.reply);
        return;
    }
  };
}
