import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from '../service/problem.js';
import { authenticate, type Caller } from './bearer.js';

/** Route hook: answers 401 unless `Authorization: Bearer <tenant>:<principal>` names a caller. */
export async function requireCaller(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const result = authenticate(request.headers.authorization);
  // Returning the reply ends the request here (Fastify's rule for async hooks that answer).
  if (result.kind === 'unauthenticated') return sendProblem(reply.header('www-authenticate', 'Bearer'), 'unauthenticated', 401, result.detail);
  request.demo.caller = result.caller;
  return undefined;
}

/** The caller of a route guarded by {@link requireCaller}. */
export function callerOf(request: FastifyRequest): Caller {
  const caller = request.demo.caller;
  if (!caller) throw new Error('oncely demo: route is missing the requireCaller hook');
  return caller;
}
