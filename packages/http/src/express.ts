export type { IdempotencyContext, IdempotencyHttpOptions } from './contract/options.js';
export { type ExpressKeyLookupOptions, expressKeyLookup } from './express/key-lookup.js';
export {
  type ExpressIdempotencyOptions,
  expressIdempotency,
  expressIdempotencyContext,
} from './express/middleware.js';
