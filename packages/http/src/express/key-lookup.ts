import type { Request, RequestHandler } from 'express';
import { createKeyLookup, type KeyLookupOptions } from '../lookup/key-lookup.js';
import { writeReply } from './write-reply.js';

/** Options of {@link expressKeyLookup}: the lookup's, plus the route parameter holding the key. */
export interface ExpressKeyLookupOptions extends KeyLookupOptions<Request> {
  /** Name of the route parameter (default `key`, as in `/idempotency-keys/:key`). */
  readonly param?: string;
}

/**
 * Express handler for `GET /idempotency-keys/:key`: the caller's own records for the key.
 *
 * ```ts
 * app.get('/idempotency-keys/:key', expressKeyLookup({ engine, operations: ['payments.create.v1'], scope }));
 * ```
 */
export function expressKeyLookup(options: ExpressKeyLookupOptions): RequestHandler {
  const lookup = createKeyLookup(options);
  const param = options.param ?? 'key';
  return (req, res, next) => {
    const key = req.params[param];
    lookup(req, typeof key === 'string' ? key : undefined).then((reply) => writeReply(res, reply), next);
  };
}
