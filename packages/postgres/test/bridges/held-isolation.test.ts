import type { EntityManager as MikroEm } from '@mikro-orm/core';
import { createIdempotency, OncelyError } from '@oncely/core';
import { mikroOrmBridge } from '@oncely/postgres/mikro-orm';
import { typeormBridge } from '@oncely/postgres/typeorm';
import { type PgRoundTripProxy, startPgRoundTripProxy } from '@oncely/test-support';
import { uniqueKey } from '@oncely/testkit';
import fc from 'fast-check';
import { DataSource, type EntityManager } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TransactionBridge } from '../../src/index.js';
import { postgresStore } from '../../src/index.js';
import { setIsolation } from '../../src/sql/isolation.js';
import { sqlState } from '../../src/driver/sql-state.js';
import { DATABASE_URL, migratedSchema, rawRecord } from '../support/database.js';
import { gate, until } from '../support/wait.js';
import { type OpenedDb, paymentsTable } from './cases/bridge-case.js';
import { mikroOrmPg } from './cases/mikro-orm-pg.js';
import { typeormPg } from './cases/typeorm-pg.js';

// An ORM's isolation level on the held route: oncely's claim message starts with SET TRANSACTION
// ISOLATION LEVEL (BEGIN ISOLATION LEVEL after the claim is refused by PostgreSQL, 25001), so the
// transaction the claim opens runs at the ORM's level and still costs what raw pg costs.
const { pool, schema } = migratedSchema('held_isolation', { max: 3 });
let proxy: PgRoundTripProxy;
beforeAll(async () => {
  await pool.query(paymentsTable(schema));
  proxy = await startPgRoundTripProxy(DATABASE_URL);
});
afterAll(() => proxy?.close());

const request = (key: string) => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount: 10 } });

/** One ORM with an isolation level: its bridge, and raw SQL through its transaction object. */
interface IsolatedOrm<Db, Tx> {
  readonly name: string;
  bridge(level: string): TransactionBridge<Db, Tx>;
  open(url: string, max: number): Promise<OpenedDb<Db>>;
  sql<R>(tx: Tx, text: string): Promise<R[]>;
  insert(tx: Tx, key: string): Promise<unknown>;
}

const typeorm: IsolatedOrm<DataSource, EntityManager> = {
  name: 'typeorm (pg)',
  bridge: (level) => typeormBridge({ isolationLevel: level as 'SERIALIZABLE' }) as TransactionBridge<DataSource, EntityManager>,
  open: async (url, max) => (await typeormPg.open(url, max, schema)) as OpenedDb<DataSource>,
  sql: async (tx, text) => tx.query(text),
  insert: (tx, key) => typeormPg.insert(tx, schema, { key, amount: 10 }),
};

const mikro: IsolatedOrm<MikroEm, MikroEm> = {
  name: 'mikro-orm 6 (pg)',
  bridge: (level) => mikroOrmBridge<MikroEm>({ isolationLevel: level.toLowerCase() as never }),
  open: (url, max) => mikroOrmPg.open(url, max, schema),
  sql: async (tx, text) => tx.getConnection().execute(text, [], 'all', tx.getTransactionContext()),
  insert: (tx, key) => mikroOrmPg.insert(tx, schema, { key, amount: 10 }),
};

const level = async <Db, Tx>(orm: IsolatedOrm<Db, Tx>, tx: Tx) =>
  (await orm.sql<{ transaction_isolation: string }>(tx, 'SHOW transaction_isolation'))[0]!.transaction_isolation;

for (const orm of [typeorm, mikro] as IsolatedOrm<unknown, unknown>[]) {
  describe(`${orm.name} with an isolation level: the transaction oncely opens runs at it`, () => {
    let opened: OpenedDb<unknown>;
    beforeAll(async () => {
      opened = await orm.open(DATABASE_URL, 3);
    });
    afterAll(() => opened?.close());

    for (const wanted of ['READ COMMITTED', 'REPEATABLE READ', 'SERIALIZABLE']) {
      it(`${wanted}: the held route, SHOW transaction_isolation inside the handler says so, and the claim is in that transaction`, async () => {
        const bridge = orm.bridge(wanted);
        expect(bridge.pg?.pool(opened.db)).toBeDefined();
        const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge, schema }) });
        const key = uniqueKey('iso');
        const result = await idempotency.runInTransaction(request(key), async ({ tx }) => {
          const [mine] = await orm.sql<{ state: string }>(tx, `SELECT state FROM "${schema}".oncely_idempotency WHERE idempotency_key = '${key}'`);
          return { status: 201, body: { level: await level(orm, tx), state: mine?.state } };
        });
        expect(result).toMatchObject({ kind: 'executed', response: { body: { level: wanted.toLowerCase(), state: 'in_progress' } } });
      });
    }

    it('SERIALIZABLE costs what raw pg costs: a first request adds no round trip, a replay is one', async () => {
      const through = await orm.open(proxy.url, 1);
      try {
        const bridge = orm.bridge('SERIALIZABLE');
        const idempotency = createIdempotency({ store: postgresStore({ db: through.db, bridge, schema }) });
        const pay = (key: string) => async ({ tx }: { tx: unknown }) => ({ status: 201, body: { id: await orm.insert(tx, key) } });
        const perCall = async (work: () => Promise<unknown>) => {
          const before = proxy.traffic().requests;
          await work();
          return proxy.traffic().requests - before;
        };
        const warm = uniqueKey('warm');
        await idempotency.runInTransaction(request(warm), pay(warm));
        await bridge.transaction(through.db, (tx) => orm.insert(tx, 'alone'));
        const alone = await perCall(() => bridge.transaction(through.db, (tx) => orm.insert(tx, 'alone')));
        const key = uniqueKey('rt');
        const first = await perCall(() => idempotency.runInTransaction(request(key), pay(key)));
        const replay = await perCall(() => idempotency.runInTransaction(request(key), pay(key)));
        // Raw pg's figures: claim + SET + BEGIN, the INSERT, save + COMMIT; the ORM's own transaction sends at least as many.
        expect({ first, replay, alone: alone >= 3 }).toEqual({ first: 3, replay: 1, alone: true });
      } finally {
        await through.close();
      }
    });

    it('REPEATABLE READ: a duplicate waiting on the key restarts on the serialization failure and replays', async () => {
      const bridge = orm.bridge('REPEATABLE READ');
      const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge, schema }) });
      const key = uniqueKey('rr-wait');
      const inside = gate();
      const proceed = gate();
      let holder = 0;
      const first = idempotency.runInTransaction(request(key), async ({ tx }) => {
        await orm.insert(tx, key);
        holder = (await orm.sql<{ pid: number }>(tx, 'SELECT pg_backend_pid() AS pid'))[0]!.pid;
        inside.open();
        await proceed.opened;
        return { status: 201, body: { first: true } };
      });
      await inside.opened;
      const duplicate = idempotency.runInTransaction(request(key), async ({ tx }) => {
        await orm.insert(tx, key);
        return { status: 201, body: { first: false } };
      });
      try {
        await until('the duplicate waits on the key', async () => {
          const { rows } = await pool.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [holder]);
          return rows.length > 0;
        });
      } finally {
        proceed.open();
      }
      expect((await first).kind).toBe('executed');
      expect(await duplicate).toMatchObject({ kind: 'replayed', response: { body: { first: true } } });
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".bridge_payments WHERE idem_key = $1`, [key]);
      expect(rows[0].n).toBe(1);
    });

    it('SERIALIZABLE: write skew between two handlers fails one at COMMIT with a StorageError, nothing of it committed, and its retry executes', async () => {
      const bridge = orm.bridge('SERIALIZABLE');
      const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge, schema }) });
      const tag = uniqueKey('skew');
      const keys = [`${tag}-a`, `${tag}-b`];
      const read = [gate(), gate()];
      const wrote = [gate(), gate()];
      // Each handler reads the other's rows (none yet), then inserts its own: a read/write dependency
      // cycle; both have written before either commits, so the failure comes at the save or COMMIT.
      const pay = (index: number) => async ({ tx }: { tx: unknown }) => {
        await orm.sql(tx, `SELECT count(*) FROM "${schema}".bridge_payments WHERE idem_key LIKE '${tag}%'`);
        read[index]!.open();
        await read[1 - index]!.opened;
        await orm.insert(tx, keys[index]!);
        wrote[index]!.open();
        await wrote[1 - index]!.opened;
        return { status: 201, body: { index } };
      };
      const outcomes = await Promise.allSettled(keys.map((key, index) => idempotency.runInTransaction(request(key), pay(index))));
      const failed = outcomes.filter((outcome) => outcome.status === 'rejected') as PromiseRejectedResult[];
      expect(failed).toHaveLength(1);
      const error = failed[0]!.reason as OncelyError & { cause?: unknown };
      expect(error).toMatchObject({ code: 'storage_error' });
      expect(sqlState(error.cause)).toBe('40001');
      const loser = outcomes.findIndex((outcome) => outcome.status === 'rejected');
      expect(await rawRecord(pool, `"${schema}".oncely_idempotency`, request(keys[loser]!))).toBeUndefined();
      const rows = async (key: string) =>
        (await pool.query(`SELECT count(*)::int AS n FROM "${schema}".bridge_payments WHERE idem_key = $1`, [key])).rows[0].n;
      expect(await rows(keys[loser]!)).toBe(0);
      expect((await idempotency.runInTransaction(request(keys[loser]!), pay(loser))).kind).toBe('executed');
      expect(await rows(keys[loser]!)).toBe(1);
    });
  });
}

describe('the isolation level oncely writes into its claim message', () => {
  it('is one of the four, in the spellings ORMs use, written from the list and never from the input', () => {
    expect(setIsolation(undefined)).toBeNull();
    expect(setIsolation('repeatable read')).toBe('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    expect(setIsolation('RepeatableRead')).toBe('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    expect(setIsolation('SERIALIZABLE')).toBe('SET TRANSACTION ISOLATION LEVEL SERIALIZABLE');
    expect(setIsolation('read_uncommitted')).toBe('SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
    const statements = new Set(['READ UNCOMMITTED', 'READ COMMITTED', 'REPEATABLE READ', 'SERIALIZABLE'].map((l) => `SET TRANSACTION ISOLATION LEVEL ${l}`));
    fc.assert(
      fc.property(fc.string(), (input) => {
        try {
          expect(statements.has(setIsolation(input)!)).toBe(true);
        } catch (error) {
          if (!(error instanceof OncelyError)) throw error;
          expect(error.code).toBe('invalid_option');
        }
      }),
    );
  });

  it('an unknown level is refused when the store is created, before any SQL is sent', async () => {
    const source = new DataSource({ type: 'postgres', url: proxy.url, poolSize: 1 });
    await source.initialize();
    try {
      const before = proxy.traffic().requests;
      expect(() => postgresStore({ db: source, bridge: typeormBridge({ isolationLevel: 'SNAPSHOT; DROP TABLE x' as never }), schema })).toThrow(
        expect.objectContaining({ code: 'invalid_option' }),
      );
      expect(() => postgresStore({ db: source, bridge: typeormBridge({ isolationLevel: 'SNAPSHOT' as never }), schema })).toThrow(/isolation level/);
      expect(proxy.traffic().requests).toBe(before);
    } finally {
      await source.destroy();
    }
  });
});
