import { createIdempotency } from '@oncely/core';
import { migrate, postgresStore } from '@oncely/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Binding, bindings, type RouteSpec, withServer } from './support/bindings.js';
import { DATABASE_URL } from './support/databases.js';
import { expectProblem } from './support/payments.js';
import { postJson } from './support/send.js';
import { createPayments, paymentRows, runName } from './support/storms.js';

/**
 * Transaction mode when the handler's own connection dies: PostgreSQL terminates the backend
 * (`pg_terminate_backend`, as a restart or a failover does) while the handler runs. Nothing can have
 * committed, so every binding answers 503 with Retry-After, never 500, however the failure reaches
 * the contract; and the retry with the same key executes once.
 */

type Tx = { query<R>(text: string, params?: unknown[]): Promise<{ rows: R[] }> };

const name = runName('oncely_loss');
const pool = new pg.Pool({ connectionString: DATABASE_URL, application_name: name, max: 4 });
pool.on('error', () => undefined);
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });

beforeAll(async () => {
  await migrate(pool, { schema: name });
  await createPayments(pool, name);
});
afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  await Promise.all([pool.end(), admin.end()]);
});

/** Terminates the backend of the handler's own transaction, from another connection. */
async function killOwnBackend(tx: Tx): Promise<void> {
  const [row] = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
  await admin.query('SELECT pg_terminate_backend($1)', [row!.pid]);
}

/** How the handler meets the dead connection. */
type Failure = 'rethrows' | 'wraps' | 'swallows' | 'after-last-statement';

/**
 * `POST /payments`: on the first attempt of a key its backend is killed mid-handler; the handler then
 * inserts (and rethrows, wraps the error, or swallows it and answers 201), or had already inserted
 * and answers 201 before COMMIT. Later attempts insert and answer 201.
 */
function route(failure: Failure, attempts: Map<string, number>): RouteSpec {
  return {
    method: 'POST',
    path: '/payments',
    options: { operation: `payments.loss.${failure}`, mode: 'transaction' },
    async handle({ body, context }) {
      if (context.kind !== 'transaction') throw new Error(`expected a transaction, got ${context.kind}`);
      const tx = context.tx as Tx;
      const key = String((body as { key: string }).key);
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      const insert = () => tx.query<{ id: string }>(`INSERT INTO "${name}".payments (key) VALUES ($1) RETURNING id::text AS id`, [key]);
      let id = 'none';
      if (attempt === 1 && failure === 'after-last-statement') {
        id = (await insert()).rows[0]!.id;
        await killOwnBackend(tx);
      } else if (attempt === 1) {
        await killOwnBackend(tx);
        try {
          id = (await insert()).rows[0]!.id;
        } catch (error) {
          if (failure === 'wraps') throw new Error('the payment could not be recorded', { cause: error });
          if (failure === 'rethrows') throw error;
        }
      } else {
        id = (await insert()).rows[0]!.id;
      }
      return { status: 201, body: { kind: 'json', value: { id } } };
    },
  };
}

const tested = bindings.filter((binding) => binding.name !== 'hono');
const failures: Failure[] = ['rethrows', 'wraps', 'swallows', 'after-last-statement'];

describe.each(tested.map((binding: Binding) => ({ binding, name: binding.name })))('$name, transaction mode', ({ binding }) => {
  it.each(failures)('the handler’s backend is terminated (the handler %s): 503 + Retry-After, and the retry executes once', async (failure) => {
    const key = runName(`${binding.name}-${failure}`);
    const engine = createIdempotency({ store: postgresStore({ db: pool, schema: name }) });
    await withServer(binding, engine, [route(failure, new Map())], async (url) => {
      const first = await postJson(url, '/payments', { key }, key);
      expectProblem(first, 'storage-unavailable', 503);
      expect(first.headers['retry-after']).toMatch(/^\d+$/);
      expect((await paymentRows(admin, name)).filter((row) => row.key === key)).toHaveLength(0);

      const retry = await postJson(url, '/payments', { key }, key);
      expect(retry.status).toBe(201);
      const rows = (await paymentRows(admin, name)).filter((row) => row.key === key);
      expect(rows).toHaveLength(1);
      expect(retry.json()).toEqual({ id: rows[0]!.id });
      const replay = await postJson(url, '/payments', { key }, key);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json()).toEqual({ id: rows[0]!.id });
    });
  });
});
