import type { Context, Handler } from 'hono';
import { toResponse } from '../fetch/to-response.js';
import { createKeyLookup, type KeyLookupOptions } from '../lookup/key-lookup.js';

/** Options of {@link honoKeyLookup}: the lookup's, plus the route parameter holding the key. */
export interface HonoKeyLookupOptions extends KeyLookupOptions<Context> {
  /** Name of the route parameter (default `key`, as in `/idempotency-keys/:key`). */
  readonly param?: string;
}

/**
 * Hono handler for `GET /idempotency-keys/:key`: the caller's own records for the key.
 *
 * ```ts
 * app.get('/idempotency-keys/:key', honoKeyLookup({ engine, operations: ['payments.create.v1'], scope }));
 * ```
 */
export function honoKeyLookup(options: HonoKeyLookupOptions): Handler {
  const lookup = createKeyLookup(options);
  const param = options.param ?? 'key';
  return async (c) => toResponse(await lookup(c, c.req.param(param)));
}
