import { createIdempotency } from '@oncely/core';
import { postgresStore } from '@oncely/postgres';
import { afterAll, describe, expect, it } from 'vitest';
import type { KeyLookupBody } from '../src/index.js';
import { bindings, type RouteSpec, withServer } from './support/bindings.js';
import { pgliteDatabase, postgresDatabase, type TestDatabase } from './support/databases.js';
import { expectProblem } from './support/payments.js';
import { postJson, send } from './support/send.js';

const databases: TestDatabase[] = [postgresDatabase(), pgliteDatabase()];
afterAll(async () => {
  for (const database of databases) await database.close();
});

/**
 * `POST /exports`: the long-running pattern. In one transaction: the claim, a durable job row and the
 * saved 202 answer; a worker (not shown) runs the job later. `fail` makes the handler break after
 * inserting the job, to prove the rollback takes the job with it.
 */
function exportRoute(schema: string, options: { slow?: boolean; fail?: () => boolean } = {}): RouteSpec {
  return {
    method: 'POST',
    path: '/exports',
    options: {
      operation: 'exports.create.v1',
      mode: 'transaction',
      resourceId: ({ headers }) => (typeof headers.location === 'string' ? headers.location.split('/').pop() : undefined),
    },
    async handle({ caller, context }) {
      if (context.kind !== 'transaction') throw new Error(`expected a transaction, got ${context.kind}`);
      const tx = context.tx as { query<R>(text: string, params?: unknown[]): Promise<{ rows: R[] }> };
      const { rows } = await tx.query<{ id: string }>(
        `INSERT INTO "${schema}".jobs (tenant, kind) VALUES ($1, 'export') RETURNING id::text AS id`,
        [caller.tenant],
      );
      const id = rows[0]!.id;
      // Hold the transaction open so concurrent duplicates really wait on the key.
      if (options.slow) await tx.query('SELECT pg_sleep(0.2)');
      if (options.fail?.()) throw new Error('worker queue unavailable');
      return { status: 202, headers: { location: `/jobs/${id}` }, body: { kind: 'json', value: { jobId: id, status: 'queued' } } };
    },
  };
}

async function jobs(database: TestDatabase, schema: string): Promise<number> {
  const rows = await database.rows<{ count: string }>(`SELECT count(*)::text AS count FROM "${schema}".jobs`);
  return Number(rows[0]!.count);
}

describe.each(databases.flatMap((database) => bindings.map((binding) => ({ database, binding, name: `${binding.name} on ${database.name}` }))))(
  '$name: 202 Accepted with a durable job, in one transaction',
  ({ database, binding }) => {
    it('the first request commits claim, job and 202 together; retries get the same job URL', async () => {
      const schema = await database.createSchema();
      const engine = createIdempotency({ store: postgresStore({ db: database.db, schema }) });
      await withServer(
        binding,
        engine,
        [exportRoute(schema)],
        async (url) => {
          const first = await postJson(url, '/exports', { format: 'csv' }, 'export-1');
          expect(first.status).toBe(202);
          expect(first.headers.location).toMatch(/^\/jobs\/\d+$/);
          const retry = await postJson(url, '/exports', { format: 'csv' }, 'export-1');
          expect(retry.status).toBe(202);
          expect(retry.headers['idempotent-replayed']).toBe('true');
          expect(retry.headers.location).toBe(first.headers.location);
          expect(retry.json()).toEqual(first.json());
          const lookup = await send(url, '/idempotency-keys/export-1', { method: 'GET', headers: { authorization: 'Bearer acme/alice' } });
          expect((lookup.json() as KeyLookupBody).records[0]).toMatchObject({
            state: 'succeeded',
            response: { status: 202, resourceId: first.headers.location!.split('/').pop() },
          });
        },
        { operations: ['exports.create.v1'] },
      );
      expect(await jobs(database, schema)).toBe(1);
    });

    it('concurrent duplicates wait on the key, then all answer with the one job', async () => {
      const schema = await database.createSchema();
      const engine = createIdempotency({ store: postgresStore({ db: database.db, schema }) });
      await withServer(binding, engine, [exportRoute(schema, { slow: true })], async (url) => {
        const responses = await Promise.all(Array.from({ length: 8 }, () => postJson(url, '/exports', { format: 'csv' }, 'export-race')));
        expect(responses.map((response) => response.status)).toEqual(Array(8).fill(202));
        expect(new Set(responses.map((response) => response.headers.location)).size).toBe(1);
        expect(responses.filter((response) => response.headers['idempotent-replayed'] === 'true')).toHaveLength(7);
      });
      expect(await jobs(database, schema)).toBe(1);
    });

    it('a failure after the job insert rolls back job and claim together: the retry creates the job once', async () => {
      const schema = await database.createSchema();
      const engine = createIdempotency({ store: postgresStore({ db: database.db, schema }) });
      let attempts = 0;
      await withServer(binding, engine, [exportRoute(schema, { fail: () => ++attempts === 1 })], async (url) => {
        expect((await postJson(url, '/exports', { format: 'csv' }, 'export-1')).status).toBe(500);
        expect(await jobs(database, schema)).toBe(0);
        const retry = await postJson(url, '/exports', { format: 'csv' }, 'export-1');
        expect(retry.status).toBe(202);
        expect(retry.headers['idempotent-replayed']).toBeUndefined();
      });
      expect(await jobs(database, schema)).toBe(1);
    });

    it('a store that cannot claim (its table is missing) answers 503 and no job is created', async () => {
      const schema = await database.createSchema();
      const engine = createIdempotency({ store: postgresStore({ db: database.db, schema, table: 'not_migrated' }) });
      await withServer(binding, engine, [exportRoute(schema)], async (url) => {
        expectProblem(await postJson(url, '/exports', { format: 'csv' }, 'export-1'), 'storage-unavailable', 503);
      });
      expect(await jobs(database, schema)).toBe(0);
    });
  },
);
