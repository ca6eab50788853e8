import { createIdempotency, type Idempotency, type IdempotencyStore, memoryStore } from '@oncely/core';
import { migrate, postgresStore } from '@oncely/postgres';
import { redisStore } from '@oncely/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { memoryFloor, redisFloor, type StoreFloor } from './store-floor.js';

/** The stores every binding is measured on, in the order the tables list them. */
export const STORES = ['memory', 'redis', 'postgres'] as const;

/** One of {@link STORES}. */
export type StoreName = (typeof STORES)[number];

/** The stores with a floor route: the bare route plus only the store's raw work ({@link StoreFloor}). */
export const FLOORS = ['memory', 'redis'] as const;

/** One of {@link FLOORS}. */
export type FloorName = (typeof FLOORS)[number];

/** Paths every bench server offers: the bare route, the floor routes, then the same route with oncely per store. */
export const ROUTES = {
  plain: '/payments',
  'floor-memory': '/payments/floor/memory',
  'floor-redis': '/payments/floor/redis',
  memory: '/payments/memory',
  redis: '/payments/redis',
  postgres: '/payments/postgres',
} as const satisfies Record<'plain' | `floor-${FloorName}` | StoreName, string>;

/** The operation name every idempotent route uses. */
export const OPERATION = 'payments.create.v1';

/** Where the stores live. */
export interface RouteBackends {
  readonly redisUrl: string;
  readonly databaseUrl: string;
  /** Schema of the Postgres store's table; recreated at startup. */
  readonly schema: string;
}

/** The payment the load generator posts, and what every route answers with it. */
export interface PaymentInput {
  readonly amount: number;
  readonly currency: string;
}

/** What the route under test does: no I/O of its own, a fresh id per payment. */
export function createPayment(input: PaymentInput): { id: string; amount: number; currency: string } {
  return { id: `pay_${crypto.randomUUID()}`, amount: input.amount, currency: input.currency };
}

/** The caller's tenant, as every bench route reads it (a stand-in for authentication). */
export const tenantOf = (header: string | string[] | null | undefined): { tenant: string } => ({
  tenant: typeof header === 'string' ? header : 'bench',
});

/** What every bench server is built from: one engine per store, the floors, and a function that closes their connections. */
export interface BenchBackends {
  readonly engines: Record<StoreName, Idempotency<IdempotencyStore>>;
  readonly floors: Record<FloorName, StoreFloor>;
  close(): Promise<void>;
}

/** One engine per store (PostgreSQL in lease mode), the floors on the same Redis client, and a function that closes their connections. */
export async function benchEngines(backends: RouteBackends): Promise<BenchBackends> {
  const redis = new Redis(backends.redisUrl);
  // ioredis reconnects by itself; a dropped connection shows in the run's non-2xx counts, not as a crash.
  redis.on('error', (error) => console.error(`bench server: redis: ${error.message}`));
  const pool = new pg.Pool({ connectionString: backends.databaseUrl, max: 16 });
  await pool.query(`DROP SCHEMA IF EXISTS ${backends.schema} CASCADE`);
  await migrate(pool, { schema: backends.schema });
  return {
    engines: {
      memory: createIdempotency({ store: memoryStore() }),
      redis: createIdempotency({ store: redisStore({ client: redis, prefix: `${backends.schema}:` }) }),
      postgres: createIdempotency({ store: postgresStore({ db: pool, schema: backends.schema }) }),
    },
    floors: { memory: memoryFloor(), redis: redisFloor(redis, `${backends.schema}:floor:`) },
    async close() {
      redis.disconnect();
      await pool.end();
    },
  };
}
