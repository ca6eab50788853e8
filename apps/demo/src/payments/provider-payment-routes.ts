import type { FlowBody, FlowResult, Idempotency } from '@oncely/core';
import type { Queryable } from '../database/database.js';
import { parseIdempotencyKey, REPLAYED_HEADER } from '@oncely/http';
import type { PostgresStore } from '@oncely/postgres';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { callerOf, requireCaller } from '../auth/require-caller.js';
import { sendProblem } from '../service/problem.js';
import { checkPaymentRequest } from './payment-request.js';
import { PROVIDER_PAYMENT } from './provider-payment.js';

/** What the provider payment routes need. */
export interface ProviderPaymentRouteOptions {
  /** The engine whose store keeps flows (the business database's). */
  readonly flows: Idempotency<PostgresStore>;
  readonly payment: FlowBody<Queryable>;
}

/** A flow's outcome as HTTP: the response (marked when replayed), 409 while another owner runs it, 422 for another body. */
function send(reply: FastifyReply, result: FlowResult): FastifyReply {
  if (result.kind === 'in_progress') {
    return sendProblem(reply.header('retry-after', String(Math.ceil(result.retryAfterMs / 1000))), 'invalid-request', 409, 'This payment is still running; retry with the same key.');
  }
  if (result.kind === 'mismatch') return sendProblem(reply, 'invalid-request', 422, 'This key was used with another request.');
  const { response } = result;
  if (result.kind === 'replayed') reply.header(REPLAYED_HEADER, 'true');
  return reply.code(response.status).headers(response.headers ?? {}).send(response.body);
}

/**
 * `POST /v1/provider-payments`: a payment that debits locally, charges a payment provider and
 * records the charge, as an oncely flow. `GET /v1/provider-payments/:key` reads its record's state.
 */
export function registerProviderPaymentRoutes(app: FastifyInstance, options: ProviderPaymentRouteOptions): void {
  app.post('/v1/provider-payments', { onRequest: requireCaller }, async (request, reply) => {
    const key = parseIdempotencyKey(request.headers['idempotency-key']);
    if (key.kind !== 'valid') return sendProblem(reply, 'invalid-request', 400, 'An Idempotency-Key header is required.');
    const check = checkPaymentRequest(request.body);
    if (check.kind === 'invalid') return sendProblem(reply, check.status === 404 ? 'account-not-found' : 'invalid-request', check.status, check.detail);
    const result = await options.flows.flow({ ...callerOf(request), operation: PROVIDER_PAYMENT, key: key.key, request: check.request }, options.payment);
    return send(reply, result);
  });
  app.get<{ Params: { key: string } }>('/v1/provider-payments/:key', { onRequest: requireCaller }, async (request, reply) => {
    const record = await options.flows.get({ ...callerOf(request), operation: PROVIDER_PAYMENT, key: request.params.key });
    return record ? reply.send({ state: record.state, fence: record.fence, response: record.response ?? null }) : reply.code(404).send({ state: 'absent' });
  });
}
