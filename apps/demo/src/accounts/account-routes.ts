import type { FastifyInstance } from 'fastify';
import { callerOf, requireCaller } from '../auth/require-caller.js';
import type { Database } from '../database/database.js';
import { ACCOUNT_SUMMARY, INVOICE_LINES, OPEN_ACCOUNT } from '../database/sql.js';
import { ACCOUNT_IDS, OPENING_BALANCE } from '../payments/payment-request.js';
import { sendProblem } from '../service/problem.js';

/** `GET /v1/accounts/:id` → `{ id, balance, payments }`, and billing's `GET /v1/invoice-lines`. */
export function registerAccountRoutes(app: FastifyInstance, database: Database): void {
  app.get<{ Params: { id: string } }>('/v1/accounts/:id', { onRequest: requireCaller }, async (request, reply) => {
    const { tenant } = callerOf(request);
    const { id } = request.params;
    if (!ACCOUNT_IDS.includes(id)) {
      return sendProblem(reply, 'account-not-found', 404, `No account ${id}: every tenant has acc_1 to acc_5.`);
    }
    await database.query(OPEN_ACCOUNT, [tenant, id, OPENING_BALANCE]);
    const { rows } = await database.query<{ id: string; balance: string; payments: number }>(ACCOUNT_SUMMARY, [tenant, id]);
    return reply.header('cache-control', 'no-store').send(rows[0]);
  });

  app.get('/v1/invoice-lines', { onRequest: requireCaller }, async (request, reply) => {
    const { rows } = await database.query(INVOICE_LINES, [callerOf(request).tenant]);
    return reply.header('cache-control', 'no-store').send({ lines: rows });
  });
}
