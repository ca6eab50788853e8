import { createIdempotency, memoryStore } from '@oncely/core';
import { withIdempotency } from '@oncely/http';
import { migrate, postgresStore } from '@oncely/postgres';
import { redisStore } from '@oncely/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { FetchHandler } from './node-fetch-adapter.js';

/** Paths the HTTP server offers: the bare route, then the route behind `withIdempotency` per store. */
export const ROUTES = {
  plain: '/payments',
  memory: '/payments/memory',
  postgres: '/payments/postgres',
  redis: '/payments/redis',
} as const;

/** Where the stores live. */
export interface RouteBackends {
  readonly redisUrl: string;
  readonly databaseUrl: string;
  /** Schema of the Postgres store's table; recreated at startup. */
  readonly schema: string;
}

/** The route under test: parse the payment, answer 201 with its id. No I/O of its own. */
const createPayment: FetchHandler = async (request) => {
  const body = (await request.json()) as { amount: number; currency: string };
  return Response.json({ id: `pay_${crypto.randomUUID()}`, amount: body.amount, currency: body.currency }, { status: 201 });
};

/** Builds every route and returns them with a function that closes their connections. */
export async function buildRoutes(backends: RouteBackends): Promise<{ routes: Map<string, FetchHandler>; close(): Promise<void> }> {
  const redis = new Redis(backends.redisUrl);
  const pool = new pg.Pool({ connectionString: backends.databaseUrl, max: 16 });
  await pool.query(`DROP SCHEMA IF EXISTS ${backends.schema} CASCADE`);
  await migrate(pool, { schema: backends.schema });
  const scope = (request: Request) => ({ tenant: request.headers.get('x-tenant') ?? 'bench' });
  const wrap = (engine: ReturnType<typeof createIdempotency>) =>
    withIdempotency(createPayment, { engine, operation: 'payments.create.v1', scope });
  const routes = new Map<string, FetchHandler>([
    [ROUTES.plain, createPayment],
    [ROUTES.memory, wrap(createIdempotency({ store: memoryStore() }))],
    [ROUTES.postgres, wrap(createIdempotency({ store: postgresStore({ db: pool, schema: backends.schema }) }))],
    [ROUTES.redis, wrap(createIdempotency({ store: redisStore({ client: redis, prefix: 'bench-http:' }) }))],
  ]);
  return {
    routes,
    async close() {
      redis.disconnect();
      await pool.end();
    },
  };
}
