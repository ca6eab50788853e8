import type { FastifyReply, FastifyRequest } from 'fastify';
import { createKeyLookup, type KeyLookupOptions } from '../lookup/key-lookup.js';
import { sendReply } from './send-reply.js';

/** Options of {@link fastifyKeyLookup}: the lookup's, plus the route parameter holding the key. */
export interface FastifyKeyLookupOptions extends KeyLookupOptions<FastifyRequest> {
  /** Name of the route parameter (default `key`, as in `/idempotency-keys/:key`). */
  readonly param?: string;
}

/**
 * Fastify handler for `GET /idempotency-keys/:key`: the caller's own records for the key.
 *
 * ```ts
 * app.get('/idempotency-keys/:key', fastifyKeyLookup({ engine, operations: ['payments.create.v1'], scope }));
 * ```
 */
export function fastifyKeyLookup(options: FastifyKeyLookupOptions): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  const lookup = createKeyLookup(options);
  const param = options.param ?? 'key';
  return async (request, reply) => sendReply(reply, await lookup(request, (request.params as Record<string, string | undefined>)[param]));
}
