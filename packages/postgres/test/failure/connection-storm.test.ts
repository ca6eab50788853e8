import { createIdempotency, isStorageError } from '@oncely/core';
import { createRelay, type Publisher } from '@oncely/core/outbox';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { unheardErrors } from '@oncely/test-support';
import { migrate, type PostgresDb, postgresJournal, postgresOutbox, postgresStore, type PostgresTx } from '../../src/index.js';
import { DATABASE_URL, dropSchema, uniqueSchema } from '../support/database.js';

/**
 * Every connection this package checks out or holds under `pg_terminate_backend` every 30 ms (only
 * this run's backends, by application_name): transactions (the store's, with the handler's own
 * writes), lease-mode statements, the journal, the outbox relay and its LISTEN connection. Nothing
 * reaches `uncaughtException` or `unhandledRejection`, every failure is a StorageError, and every
 * payment that answered committed exactly once. (The HTTP storms in @oncely/http run the same over
 * real servers with retrying clients.)
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const killer = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
const schemas: string[] = [];
const ends: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await Promise.all(ends.map((end) => end()));
  for (const schema of schemas) await dropSchema(killer, schema);
  await killer.end();
});

/** The database under the storm, through each driver, with its backends named `applicationName`. */
const drivers = {
  pg: (applicationName: string) => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, application_name: applicationName, max: 8 });
    pool.on('error', () => undefined);
    ends.push(() => pool.end());
    return {
      db: pool as PostgresDb,
      insert: (tx: PostgresTx, table: string, key: string) => tx.query(`INSERT INTO ${table} (key) VALUES ($1)`, [key]),
      oncelys: (errors: unknown[]) => errors,
    };
  },
  // Not postgres.js yet: under this storm postgres.js 3.4.9 can leave a statement pending forever when
  // its connection is killed while the statement is being described (no onexecute, no onclose for
  // it), so a relay or a worker hangs; it failed 2 of 2 full-suite runs. Its failure boundaries
  // (test/failure/failure-boundaries.test.ts) do run on postgres.js.
} as const;

for (const [driver, open] of Object.entries(drivers)) it(`pg_terminate_backend every 30 ms on every oncely connection (${driver}): no unheard error, failures are StorageErrors, one payment per executed key`, async () => {
  const schema = uniqueSchema('storm');
  schemas.push(schema);
  const applicationName = schema.slice(0, 60);
  const { db: pool, insert, oncelys } = open(applicationName);
  await migrate(pool, { schema });
  await killer.query(`CREATE TABLE "${schema}".payments (id bigserial PRIMARY KEY, key text NOT NULL)`);
  const unheard = unheardErrors();
  const engine = createIdempotency({ store: postgresStore({ db: pool, schema }) });
  const journal = postgresJournal({ db: pool, schema });
  const outbox = postgresOutbox({ db: pool, schema, channel: applicationName });
  const published: string[] = [];
  const publisher: Publisher = {
    name: 'memory',
    async publish(events) {
      published.push(...events.map((event) => event.eventId));
      return events.map(() => ({ kind: 'published' as const }));
    },
  };
  const relay = createRelay({ source: outbox.source, publisher, id: applicationName, leaseMs: 1_000, pollIntervalMs: 50, statsIntervalMs: 0, purge: false });
  relay.start();

  let stop = false;
  let killed = 0;
  const storm = (async () => {
    while (!stop) {
      const { rows } = await killer.query<{ n: number }>(
        'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
        [applicationName],
      );
      killed += rows[0]!.n;
      await sleep(30);
    }
  })();
  const failures: unknown[] = [];
  const executed: string[] = [];
  const worker = async (lane: number) => {
    for (let n = 0; !stop; n++) {
      const key = `k-${lane}-${n}`;
      const calls = [
        engine.runInTransaction({ tenant: 't', operation: 'pay', key, request: { key } }, async ({ tx }) => {
          await insert(tx as PostgresTx, `"${schema}".payments`, key);
          await outbox.enqueue(tx as PostgresTx, { aggregateType: 'payment', aggregateId: key, eventType: 'paid', payload: {} });
          return { status: 201, body: { key } };
        }),
        engine.run({ tenant: 't', operation: 'lease', key, request: { key } }, async () => ({ status: 200, body: {} })),
        journal.begin(`op-${key}`),
      ] as const;
      const [paid, ...rest] = await Promise.allSettled(calls);
      if (paid.status === 'fulfilled' && paid.value.kind === 'executed') executed.push(key);
      for (const outcome of [paid, ...rest]) if (outcome.status === 'rejected') failures.push(outcome.reason);
    }
  };
  const lanes = Promise.all([0, 1, 2, 3].map(worker));
  await sleep(3_000);
  stop = true;
  await Promise.all([lanes, storm]);
  // The relay drains what committed, after the storm.
  const enqueued = async () => Number((await killer.query(`SELECT count(*)::int AS n FROM "${schema}".oncely_outbox WHERE published_at IS NULL`)).rows[0].n);
  for (let waited = 0; waited < 10_000 && (await enqueued()) > 0; waited += 100) await sleep(100);
  await relay.stop();
  unheard.stop();

  const rows = (await killer.query<{ key: string }>(`SELECT key FROM "${schema}".payments`)).rows.map((row) => row.key);
  expect(oncelys(unheard.errors), 'unheard errors').toEqual([]);
  expect(killed, 'backends killed').toBeGreaterThan(20);
  expect(failures.length, 'the storm failed some calls').toBeGreaterThan(0);
  expect(failures.filter((failure) => !isStorageError(failure)), 'every failure is a StorageError').toEqual([]);
  expect(new Set(rows).size, 'one payment per key').toBe(rows.length);
  for (const key of executed) expect(rows).toContain(key);
  expect(await enqueued(), 'the relay drained the outbox after the storm').toBe(0);
}, 60_000);
