import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../database/database.js';
import { PROVIDER_CHARGE, PROVIDER_CHARGE_BY_KEY } from '../database/sql.js';
import { checkAmount } from '../payments/money.js';
import { sendProblem } from '../service/problem.js';

/** A charge as the fake provider reports it. */
export interface ProviderCharge {
  readonly charge_id: string;
  readonly amount: string;
  /** How many times the provider was asked for it: retries with the same key count, and charge nothing more. */
  readonly calls: number;
}

/**
 * A fake payment provider, Stripe-like: `POST /v1/provider/charges` with an `Idempotency-Key`
 * creates a charge once per key and answers every later call with the same charge;
 * `GET /v1/provider/charges/:key` says what it holds. Its state is in the database, so it
 * survives the service's crashes as a real provider would.
 */
export function registerProviderRoutes(app: FastifyInstance, database: Database): void {
  app.post('/v1/provider/charges', async (request, reply) => {
    const key = request.headers['idempotency-key'];
    const amount = checkAmount((request.body as { amount?: unknown } | null)?.amount);
    if (typeof key !== 'string' || key.length === 0 || amount.kind === 'invalid') {
      return sendProblem(reply, 'invalid-request', 400, 'The provider needs an Idempotency-Key header and { amount }.');
    }
    const id = `ch_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
    const [charge] = (await database.query<ProviderCharge>(PROVIDER_CHARGE, [key, id, amount.amount])).rows;
    return reply.code(200).send(charge);
  });
  app.get<{ Params: { key: string } }>('/v1/provider/charges/:key', async (request, reply) => {
    const [charge] = (await database.query<ProviderCharge>(PROVIDER_CHARGE_BY_KEY, [request.params.key])).rows;
    return charge ? reply.send(charge) : reply.code(404).send({ calls: 0 });
  });
}
