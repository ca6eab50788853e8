export type { IdempotencyContext, IdempotencyHttpOptions } from './contract/options.js';
export { type FastifyKeyLookupOptions, fastifyKeyLookup } from './fastify/key-lookup.js';
export {
  type FastifyIdempotencyOptions,
  type FastifyRouteIdempotency,
  fastifyIdempotency,
  fastifyIdempotencyContext,
} from './fastify/plugin.js';
