import { createKeyLookup, type KeyLookupOptions } from '../lookup/key-lookup.js';
import { toResponse } from './to-response.js';

/**
 * A fetch handler for `GET /idempotency-keys/:key`: the caller's own records for the key, for
 * reconciliation after an unknown outcome. Pass the key your router extracted from the path.
 *
 * ```ts
 * const lookup = idempotencyKeyLookup({ engine, operations: ['payments.create.v1'], scope: authenticate });
 * export const GET = (request: Request, { params }) => lookup(request, params.key);
 * ```
 */
export function idempotencyKeyLookup(options: KeyLookupOptions<Request>): (request: Request, key: string) => Promise<Response> {
  const lookup = createKeyLookup(options);
  return async (request, key) => toResponse(await lookup(request, key));
}
