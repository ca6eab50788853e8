import { type FlowBody, keyHash } from '@oncely/core';
import { fastifyKeyLookup } from '@oncely/http/fastify';
import { parseIdempotencyKey, REPLAYED_HEADER } from '@oncely/http';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { registerAccountRoutes } from '../accounts/account-routes.js';
import { callerOf, requireCaller } from '../auth/require-caller.js';
import type { Database, Queryable } from '../database/database.js';
import type { ArmedFaults } from '../faults/armed-faults.js';
import { registerFaultRoutes } from '../faults/fault-routes.js';
import { type InFlight, trackInFlight } from '../faults/in-flight.js';
import type { Counters } from '../observability/counters.js';
import { registerStatsRoutes } from '../observability/stats-routes.js';
import { outcomeOf, type Timeline } from '../observability/timeline.js';
import { CREATE_PAYMENT, registerPaymentRoutes } from '../payments/payment-routes.js';
import { registerProviderPaymentRoutes } from '../payments/provider-payment-routes.js';
import { registerProviderRoutes } from '../provider/provider-routes.js';
import type { Backend } from './backend.js';
import './request-state.js';

/** Everything the HTTP layer is built from. */
export interface ServiceParts {
  readonly database: Database;
  readonly backend: Backend;
  readonly faultsEnabled: boolean;
  readonly faults: ArmedFaults;
  readonly counters: Counters;
  readonly timeline: Timeline;
  readonly store: string;
  readonly startedAt: Date;
  /** The provider payment flow, as the completer runs it too. */
  readonly providerPayment: FlowBody<Queryable>;
}

/** The service's app, and what its background work needs from it. */
export interface ServiceApp {
  readonly app: FastifyInstance;
  readonly inFlight: InFlight;
}

/** Builds the payments service's Fastify app (not listening yet). */
export async function buildServiceApp(parts: ServiceParts): Promise<ServiceApp> {
  const { database, backend, timeline } = parts;
  const app = Fastify({ logger: false });
  const inFlight = trackInFlight(app);
  app.decorateRequest('demo');
  app.addHook('onRequest', async (request) => {
    request.demo = { arrivedAt: Date.now(), caller: undefined, fault: { kind: 'none' }, dropped: false };
  });

  async function record(request: FastifyRequest, status: number, replayed: boolean): Promise<void> {
    const key = parseIdempotencyKey(request.headers['idempotency-key']);
    timeline.add({
      at: request.demo.arrivedAt,
      method: request.method,
      path: request.url,
      tenant: request.demo.caller?.tenant ?? null,
      key_hash: key.kind === 'valid' ? await keyHash(key.key) : null,
      status,
      outcome: outcomeOf(status, replayed),
    });
  }

  // The timeline shows payment attempts: executed, replayed, rejected or failed.
  app.addHook('onResponse', async (request, reply) => {
    if (request.routeOptions.url !== '/v1/payments' || request.demo.dropped) return;
    await record(request, reply.statusCode, reply.getHeader(REPLAYED_HEADER) === 'true');
  });

  await registerPaymentRoutes(app, {
    database,
    backend,
    faultsEnabled: parts.faultsEnabled,
    faults: parts.faults,
    onDropped: (request, status) => {
      request.demo.dropped = true;
      void record(request, status, false);
    },
  });
  app.get(
    '/v1/idempotency-keys/:key',
    { onRequest: requireCaller },
    fastifyKeyLookup({ engine: backend.engine, operations: [CREATE_PAYMENT], scope: (request) => callerOf(request) }),
  );
  registerProviderPaymentRoutes(app, { flows: backend.flows, payment: parts.providerPayment });
  registerProviderRoutes(app, database);
  registerAccountRoutes(app, database);
  registerFaultRoutes(app, { enabled: parts.faultsEnabled, faults: parts.faults });
  registerStatsRoutes(app, {
    database,
    outbox: backend.outbox,
    counters: parts.counters,
    timeline,
    store: parts.store,
    startedAt: parts.startedAt,
  });
  return { app, inFlight };
}
