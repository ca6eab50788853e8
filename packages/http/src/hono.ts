export type { IdempotencyContext, IdempotencyHttpOptions } from './contract/options.js';
export { type HonoKeyLookupOptions, honoKeyLookup } from './hono/key-lookup.js';
export { type HonoIdempotencyOptions, honoIdempotency, honoIdempotencyContext } from './hono/middleware.js';
