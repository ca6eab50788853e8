import { createIdempotency } from '@oncely/core';
import { type PgRoundTripProxy, startPgRoundTripProxy } from '@oncely/test-support';
import { uniqueKey } from '@oncely/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/index.js';
import { DATABASE_URL, migratedSchema } from '../support/database.js';
import type { BridgeCase } from './cases/bridge-case.js';
import { paymentsTable } from './cases/bridge-case.js';
import { drizzleNodePostgres } from './cases/drizzle-node-postgres.js';
import { drizzlePostgresJs } from './cases/drizzle-postgres-js.js';
import { knexCase } from './cases/knex.js';
import { kyselyCase } from './cases/kysely.js';
import { mikroOrmPg } from './cases/mikro-orm-pg.js';
import { prismaAdapterPg } from './cases/prisma-adapter-pg.js';
import { prismaAdapterPgHeld } from './cases/prisma-adapter-pg-held.js';
import { typeormPg } from './cases/typeorm-pg.js';

// The round trips each bridge adds over the ORM's own transaction, counted on the wire as the bench
// counts them (the times the client waited for the server: messages written together are one, and
// postgres.js's Describe before an unprepared statement is one more), one connection, sequential calls.
const { pool: observer, schema } = migratedSchema('round_trips', { max: 2 });
let proxy: PgRoundTripProxy;
beforeAll(async () => {
  await observer.query(paymentsTable(schema));
  proxy = await startPgRoundTripProxy(DATABASE_URL);
});
afterAll(() => proxy?.close());

const CALLS = 5;
const request = (key: string) => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount: 10 } });

/** Round trips per call of `work`, over CALLS sequential calls. */
async function perCall(work: (call: number) => Promise<unknown>): Promise<number> {
  const before = proxy.traffic().roundTrips;
  for (let call = 0; call < CALLS; call++) await work(call);
  return (proxy.traffic().roundTrips - before) / CALLS;
}

/** The figures of one path: the bare transaction around one INSERT, and oncely's paths around the same. */
interface Figures {
  readonly alone: number;
  readonly first: number;
  readonly replay: number;
  readonly joinedFirst: number;
  readonly joinedReplay: number;
}

async function bridgeFigures<Db, Tx>(orm: BridgeCase<Db, Tx>): Promise<Figures> {
  const opened = await orm.open(proxy.url, 1, schema);
  try {
    const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge: orm.bridge, schema }) });
    const pay = (key: string) => async ({ tx }: { tx: Tx }) => ({ status: 201, body: { id: await orm.insert(tx, schema, { key, amount: 10 }) } });
    const keys = Array.from({ length: CALLS }, () => uniqueKey('rt'));
    const joined = Array.from({ length: CALLS }, () => uniqueKey('rt-join'));
    // Warm up: the connection opened, oncely's statements and the ORM's metadata ready.
    const warm = uniqueKey('warm');
    await idempotency.runInTransaction(request(warm), pay(warm));
    await orm.bridge.transaction(opened.db, (tx) => idempotency.runInTransaction(request(warm), pay(warm), { tx }));
    // A joined first request too: its save is a statement of its own, prepared on first use (postgres.js).
    const warmJoin = uniqueKey('warm-join');
    await orm.bridge.transaction(opened.db, (tx) => idempotency.runInTransaction(request(warmJoin), pay(warmJoin), { tx }));
    const figures: Figures = {
      alone: await perCall(() => orm.bridge.transaction(opened.db, (tx) => orm.insert(tx, schema, { key: 'alone', amount: 10 }))),
      first: await perCall((call) => idempotency.runInTransaction(request(keys[call]!), pay(keys[call]!))),
      replay: await perCall((call) => idempotency.runInTransaction(request(keys[call]!), pay(keys[call]!))),
      joinedFirst: await perCall((call) => orm.bridge.transaction(opened.db, (tx) => idempotency.runInTransaction(request(joined[call]!), pay(joined[call]!), { tx }))),
      joinedReplay: await perCall((call) => orm.bridge.transaction(opened.db, (tx) => idempotency.runInTransaction(request(joined[call]!), pay(joined[call]!), { tx }))),
    };
    return figures;
  } finally {
    await opened.close();
  }
}

/** The raw-driver path for comparison: oncely's own pg transaction around the same INSERT. */
async function rawFigures(): Promise<Figures> {
  const pool = new pg.Pool({ connectionString: proxy.url, max: 1 });
  try {
    const idempotency = createIdempotency({ store: postgresStore({ db: pool, schema }) });
    const insert = (tx: { query(text: string, params: unknown[]): Promise<unknown> }, key: string) =>
      tx.query(`INSERT INTO "${schema}".bridge_payments (idem_key, amount) VALUES ($1, 10)`, [key]);
    const pay = (key: string) => async ({ tx }: { tx: { query(text: string, params: unknown[]): Promise<unknown> } }) => {
      await insert(tx, key);
      return { status: 201 };
    };
    const bare = async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await insert(client, 'alone');
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    };
    const joinedIn = async (key: string) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await idempotency.runInTransaction(request(key), pay(key), { tx: client });
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    };
    const keys = Array.from({ length: CALLS }, () => uniqueKey('rt-raw'));
    const joined = Array.from({ length: CALLS }, () => uniqueKey('rt-raw-join'));
    const warm = uniqueKey('warm');
    await idempotency.runInTransaction(request(warm), pay(warm));
    await joinedIn(warm);
    return {
      alone: await perCall(bare),
      first: await perCall((call) => idempotency.runInTransaction(request(keys[call]!), pay(keys[call]!))),
      replay: await perCall((call) => idempotency.runInTransaction(request(keys[call]!), pay(keys[call]!))),
      joinedFirst: await perCall((call) => joinedIn(joined[call]!)),
      joinedReplay: await perCall((call) => joinedIn(joined[call]!)),
    };
  } finally {
    await pool.end();
  }
}

/** Round trips over the bare transaction (BEGIN, INSERT, COMMIT: 3), as the README's bridge round-trip table gives them. */
const added = (f: Figures) => ({ first: f.first - f.alone, replay: f.replay, joinedFirst: f.joinedFirst - f.alone, joinedReplay: f.joinedReplay });

describe('round trips each ORM bridge adds over the ORM transaction alone (one INSERT), counted on the wire', () => {
  it("raw pg, oncely's own driver: a first request adds none (the claim travels with BEGIN, the save with COMMIT), a replay is one message", async () => {
    const raw = await rawFigures();
    expect(raw.alone).toBe(3);
    // A joined first request: SAVEPOINT, claim, save (the savepoint stands until the caller's COMMIT); a joined replay: the caller's BEGIN and COMMIT, SAVEPOINT, claim.
    expect(added(raw)).toEqual({ first: 0, replay: 1, joinedFirst: 3, joinedReplay: 4 });
  });

  // Bridges with a pg member: the store holds a connection of the ORM's own pool and hands the
  // handler the ORM's transaction object over it (Drizzle's, TypeORM's manager, Knex's trx, a MikroORM fork, Kysely's trx).
  for (const orm of [drizzleNodePostgres, typeormPg, knexCase, mikroOrmPg, kyselyCase, prismaAdapterPgHeld] as BridgeCase<unknown, unknown>[]) {
    it(`${orm.name}: the bridge's pg member lets oncely hold the connection (claim with BEGIN, save with COMMIT), so it costs what raw pg costs`, async () => {
      const figures = await bridgeFigures(orm);
      expect(figures.alone).toBe(3);
      expect(added(figures)).toEqual({ first: 0, replay: 1, joinedFirst: 3, joinedReplay: 4 });
    });
  }

  // Drizzle's postgres.js member: the store reserves a connection and pipelines the read with claim + BEGIN, as on postgres.js alone.
  it(`${drizzlePostgresJs.name}: the bridge's postgresJs member lets oncely reserve the connection (read and claim + BEGIN in one write, save with COMMIT), so it costs what the bare transaction costs`, async () => {
    const figures = await bridgeFigures(drizzlePostgresJs as BridgeCase<unknown, unknown>);
    // BEGIN, the insert's Describe (Drizzle's statements are unnamed), the insert, COMMIT.
    expect(figures.alone).toBe(4);
    // oncely's own statements are named and prepared per connection through the bridge: one round trip each, joined as on raw pg.
    expect(added(figures)).toEqual({ first: 0, replay: 1, joinedFirst: 3, joinedReplay: 4 });
  });

  for (const orm of [prismaAdapterPg] as BridgeCase<unknown, unknown>[]) {
    it(`${orm.name}: a first request adds the claim and the save; a replay is BEGIN, claim, ROLLBACK; a join costs what it costs on raw pg`, async () => {
      const figures = await bridgeFigures(orm);
      expect(figures.alone).toBe(3);
      expect(added(figures)).toEqual({ first: 2, replay: 3, joinedFirst: 3, joinedReplay: 4 });
    });
  }
});
