import { setTimeout as sleep } from 'node:timers/promises';
import { fastifyIdempotency, fastifyIdempotencyContext } from '@oncely/http/fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callerOf, requireCaller } from '../auth/require-caller.js';
import type { Database, Queryable } from '../database/database.js';
import type { ArmedFaults } from '../faults/armed-faults.js';
import { crashNow } from '../faults/crash.js';
import { dropResponse } from '../faults/drop-response.js';
import type { RequestFault } from '../faults/fault-header.js';
import { faultHeaderHook } from '../faults/fault-routes.js';
import type { Backend } from '../service/backend.js';
import { sendProblem } from '../service/problem.js';
import { type ChargeOutcome, charge } from './charge.js';
import { checkPaymentRequest } from './payment-request.js';

/** The operation name payments are recorded under. */
export const CREATE_PAYMENT = 'payments.create.v1';

/** What the payments route needs. */
export interface PaymentRouteOptions {
  readonly database: Database;
  readonly backend: Backend;
  readonly faultsEnabled: boolean;
  readonly faults: ArmedFaults;
  /** Called when a response is dropped on purpose, with the status it would have had. */
  readonly onDropped: (request: FastifyRequest, status: number) => void;
}

/** Route hook: while an armed card-network outage lasts, answers 503 (no Retry-After, which would resynchronise clients). */
function cardNetworkCheck(faults: ArmedFaults) {
  return async function checkCardNetwork(_request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    if (!faults.outage(Date.now())) return undefined;
    return sendProblem(reply, 'card-network-unavailable', 503, 'The card network is down; nothing was charged. Retry with the same key.');
  };
}

/** Runs the charge, then the requested fault, while the transaction is still open. */
async function chargeInTransaction(
  tx: Queryable,
  request: FastifyRequest,
  backend: Backend,
  fault: RequestFault,
): Promise<ChargeOutcome> {
  const check = checkPaymentRequest(request.body);
  // validate() ran before the claim; this only narrows the type.
  if (check.kind === 'invalid') throw new Error(check.detail);
  const outcome = await charge(tx, callerOf(request), check.request, backend.enqueue);
  if (fault.kind === 'crash-before-commit') crashNow('before-commit');
  if (fault.kind === 'delay') await sleep(fault.ms);
  return outcome;
}

/**
 * `POST /v1/payments` under the Idempotency-Key contract. In `transaction` mode the claim, the debit,
 * the payment row, the outbox event and the saved response commit in one transaction; in `lease` mode
 * (Redis records) the business writes are one database transaction inside the lease.
 */
export async function registerPaymentRoutes(app: FastifyInstance, options: PaymentRouteOptions): Promise<void> {
  const { backend, database, faults } = options;
  await app.register(fastifyIdempotency, {
    engine: backend.engine,
    mode: backend.mode,
    scope: (request) => callerOf(request),
    validate: (_request, body) => {
      const check = checkPaymentRequest(body);
      return check.kind === 'valid' ? undefined : { kind: 'invalid', status: check.status, detail: check.detail };
    },
    select: ['account_id', 'amount', 'currency'],
    // The payment id is kept with the record, so the lookup endpoint can name it.
    resourceId: ({ body }) => {
      const json = body?.encoding === 'json' ? (body.json as { id?: unknown } | null) : undefined;
      return typeof json?.id === 'string' ? json.id : undefined;
    },
  });

  app.post(
    '/v1/payments',
    {
      // The outage answers before the body is read and before the idempotency plugin's claim: nothing starts.
      onRequest: [requireCaller, faultHeaderHook(options.faultsEnabled), cardNetworkCheck(faults)],
      config: { idempotency: { operation: CREATE_PAYMENT } },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const context = fastifyIdempotencyContext<Queryable>(request);
      const { fault } = request.demo;
      if (fault.kind === 'drop-response') dropResponse(reply, (status) => options.onDropped(request, status));
      const outcome =
        context.kind === 'transaction'
          ? await chargeInTransaction(context.tx, request, backend, fault)
          : await database.transaction((tx) => chargeInTransaction(tx, request, backend, fault));
      if (outcome.kind === 'insufficient_funds') {
        return sendProblem(reply, 'insufficient-funds', 402, `The balance is ${outcome.balance}; the charge was declined.`, {
          balance: outcome.balance,
        });
      }
      return reply.code(201).header('location', `/v1/payments/${outcome.payment.id}`).send(outcome.payment);
    },
  );
}
