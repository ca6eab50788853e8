import { createIdempotency } from '@oncely/core';
import { migrate, postgresStore } from '@oncely/postgres';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PgRoundTripProxy, startPgRoundTripProxy } from '../src/servers/pg-round-trip-proxy.js';

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `bench_pgjs_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
let proxy: PgRoundTripProxy;
let sql: postgres.Sql;
let n = 0;

beforeAll(async () => {
  proxy = await startPgRoundTripProxy(databaseUrl);
  // One connection: what it has prepared carries from one request to the next, as on a warm pool.
  sql = postgres(proxy.url, { max: 1, onnotice: () => undefined });
  await migrate(sql, { schema });
  await sql.unsafe(`CREATE TABLE "${schema}".payments (id text PRIMARY KEY, amount integer NOT NULL)`);
});

afterAll(async () => {
  await sql?.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await sql?.end();
  await proxy?.close();
});

/** Round trips, requests and statements `work` took, read off the wire. */
async function traffic(work: () => Promise<unknown>) {
  const before = proxy.traffic();
  await work();
  const after = proxy.traffic();
  return { roundTrips: after.roundTrips - before.roundTrips, requests: after.requests - before.requests };
}

const insert = (tx: postgres.ISql, id: string) => tx`INSERT INTO ${tx(schema)}.payments (id, amount) VALUES (${id}, ${10})`;

describe('oncely on postgres.js, counted on the wire', () => {
  it('a transactional first request takes the bare sql.begin transaction round trips; a replay takes one and opens no transaction', async () => {
    const engine = createIdempotency({ store: postgresStore({ db: sql, schema }) });
    const attempt = (key: string) => ({ tenant: 'bench', operation: 'payments.create.v1', key, request: { amount: 10 } });
    const handler = (key: string) => async ({ tx }: { tx: postgres.Sql }) => {
      await insert(tx, key);
      return { status: 201, body: { id: key } };
    };
    // Warm: the connection prepares oncely's statements and postgres.js its insert once.
    await engine.runInTransaction(attempt('warm'), handler('warm'));
    await sql.begin((tx) => insert(tx, 'warm-bare'));

    const bare = await traffic(() => sql.begin((tx) => insert(tx, `bare-${++n}`)));
    // BEGIN, the INSERT and COMMIT, each waited on.
    expect(bare.roundTrips).toBe(3);
    const key = `first-${++n}`;
    const first = await traffic(() => engine.runInTransaction(attempt(key), handler(key)));
    expect(first.roundTrips).toBe(bare.roundTrips);
    const replay = await traffic(async () => {
      const result = await engine.runInTransaction(attempt(key), handler(key));
      expect(result.kind).toBe('replayed');
    });
    expect(replay.roundTrips).toBe(1);
    // The read and the claim are two requests written together; the claim's BEGIN never ran, so nothing is rolled back after.
    expect(replay.requests).toBe(2);
    expect((await sql.unsafe(`SELECT count(*)::int AS n FROM "${schema}".payments WHERE id = $1`, [key]))[0]?.n).toBe(1);
  });

  it('a lease-mode first request is two round trips (claim, complete) and a replay one', async () => {
    const engine = createIdempotency({ store: postgresStore({ db: sql, schema }) });
    const attempt = (key: string) => ({ tenant: 'bench', operation: 'payments.lease.v1', key, request: { amount: 10 } });
    await engine.run(attempt('warm'), async () => ({ status: 201 }));
    const key = `lease-${++n}`;
    const first = await traffic(() => engine.run(attempt(key), async () => ({ status: 201 })));
    expect(first.roundTrips).toBe(2);
    const replay = await traffic(() => engine.run(attempt(key), async () => ({ status: 201 })));
    expect(replay.roundTrips).toBe(1);
  });

  it('while replays dominate, a transactional replay is one request on the pool; a first request then takes one round trip more', async () => {
    const engine = createIdempotency({ store: postgresStore({ db: sql, schema }) });
    const attempt = (key: string) => ({ tenant: 'bench', operation: 'payments.hot.v1', key, request: { amount: 10 } });
    const handler = (key: string) => async ({ tx }: { tx: postgres.Sql }) => {
      await insert(tx, key);
      return { status: 201, body: { id: key } };
    };
    const key = `hot-${++n}`;
    await engine.runInTransaction(attempt(key), handler(key));
    for (let i = 0; i < 16; i++) await engine.runInTransaction(attempt(key), handler(key));
    const replay = await traffic(async () => expect((await engine.runInTransaction(attempt(key), handler(key))).kind).toBe('replayed'));
    expect(replay).toEqual({ roundTrips: 1, requests: 1 });
    const fresh = `hot-${++n}`;
    const first = await traffic(async () => expect((await engine.runInTransaction(attempt(fresh), handler(fresh))).kind).toBe('executed'));
    // The read, then BEGIN's message, the INSERT and save + COMMIT.
    expect(first.roundTrips).toBe(4);
  });
});
