import { createIdempotency } from '@oncely/core';
import { kyselyBridge } from '@oncely/postgres/kysely';
import { uniqueKey } from '@oncely/testkit';
import {
  type DatabaseConnection,
  type Dialect,
  DummyDriver,
  Kysely,
  PostgresDialect,
  sql,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/index.js';
import { DATABASE_URL, migratedSchema, rawRecord } from '../support/database.js';
import { type OpenedDb, paymentsTable } from './cases/bridge-case.js';
import { type Database, kyselyCase } from './cases/kysely.js';
import { refusedOpening } from './cases/refused-opening.js';

// The Kysely bridge's pg route: oncely opens the transaction on a connection of Kysely's pool and
// hands the handler Kysely's own trx over it, whose begin and final commit are answered locally
// (kysely-held-transaction.ts); where Kysely is not on its PostgresDialect over pg, the bridge keeps
// db.transaction().execute.
const { pool, schema, table } = migratedSchema('kysely_held', { max: 2 });
let opened: OpenedDb<Kysely<Database>>;
beforeAll(async () => {
  await pool.query(paymentsTable(schema));
  opened = await kyselyCase.open(DATABASE_URL, 2, schema);
});
afterAll(() => opened?.close());

const request = (key: string) => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount: 10 } });
const rows = async (key: string) => (await pool.query(`SELECT amount FROM "${schema}".bridge_payments WHERE idem_key = $1 ORDER BY id`, [key])).rows.map((row) => row.amount);
const record = (key: string) => rawRecord(pool, table, { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key });
const pay = (key: string) => async ({ tx }: { tx: Transaction<Database> }) => ({ status: 201, body: { id: await kyselyCase.insert(tx, schema, { key, amount: 10 }) } });

/** PostgresDialect over `pool` with every connection wrapped: a dialect on PostgreSQL whose connections are not Kysely's pg ones. */
function wrappedDialect(pool: pg.Pool): Dialect {
  const base = new PostgresDialect({ pool });
  return {
    createAdapter: () => base.createAdapter(),
    createQueryCompiler: () => base.createQueryCompiler(),
    createIntrospector: (db) => base.createIntrospector(db),
    createDriver() {
      const driver = base.createDriver();
      const inner = new WeakMap<DatabaseConnection, DatabaseConnection>();
      const unwrap = (connection: DatabaseConnection) => inner.get(connection)!;
      return {
        init: () => driver.init(),
        async acquireConnection() {
          const connection = await driver.acquireConnection();
          const wrapper: DatabaseConnection = {
            executeQuery: (query) => connection.executeQuery(query),
            streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
          };
          inner.set(wrapper, connection);
          return wrapper;
        },
        beginTransaction: (connection, settings) => driver.beginTransaction(unwrap(connection), settings),
        commitTransaction: (connection) => driver.commitTransaction(unwrap(connection)),
        rollbackTransaction: (connection) => driver.rollbackTransaction(unwrap(connection)),
        releaseConnection: (connection) => driver.releaseConnection(unwrap(connection)),
        destroy: () => driver.destroy(),
      };
    },
  };
}

describe('kysely on pg: the transaction oncely opens, with Kysely’s trx over its connection', () => {
  it('the handler’s trx is a Kysely Transaction inside the transaction the claim opened (it sees its own in-progress record), and refuses SQL once the handler is done', async () => {
    const bridge = kyselyBridge<Database>();
    expect(bridge.pg?.pool(opened.db)).toBeDefined();
    const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge, schema }) });
    const key = uniqueKey('held');
    let kept: Transaction<Database> | undefined;
    const result = await idempotency.runInTransaction(request(key), async ({ tx }) => {
      kept = tx;
      const { rows: mine } = await sql<{ state: string }>`SELECT state FROM ${sql.raw(table)} WHERE idempotency_key = ${key}`.execute(tx);
      await kyselyCase.insert(tx, schema, { key, amount: 10 });
      return { status: 201, body: { state: mine[0]?.state, isTransaction: tx.isTransaction } };
    });
    expect(result).toMatchObject({ kind: 'executed', response: { body: { state: 'in_progress', isTransaction: true } } });
    await expect(sql`SELECT 1`.execute(kept!)).rejects.toThrow(/already committed/);
    expect(await rows(key)).toEqual([10]);

    // A handler error rolls everything back; its trx is refused afterwards too.
    const failed = uniqueKey('held-fail');
    let thrownFrom: Transaction<Database> | undefined;
    await expect(
      idempotency.runInTransaction(request(failed), async ({ tx }) => {
        thrownFrom = tx;
        await kyselyCase.insert(tx, schema, { key: failed, amount: 10 });
        throw new Error('after the insert');
      }),
    ).rejects.toThrow('after the insert');
    await expect(sql`SELECT 1`.execute(thrownFrom!)).rejects.toThrow(/already rolled back/);
    expect([await rows(failed), await record(failed)]).toEqual([[], undefined]);
  });

  it('savepoints written as SQL through the trx work inside the transaction oncely opened: a rolled-back one goes, the claim stays', async () => {
    const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge: kyselyBridge<Database>(), schema }) });
    const key = uniqueKey('savepoint');
    const result = await idempotency.runInTransaction(request(key), async ({ tx }) => {
      await kyselyCase.insert(tx, schema, { key, amount: 1 });
      await sql`SAVEPOINT inner_work`.execute(tx);
      await kyselyCase.insert(tx, schema, { key, amount: 2 });
      await sql`ROLLBACK TO SAVEPOINT inner_work`.execute(tx);
      await kyselyCase.insert(tx, schema, { key, amount: 3 });
      return { status: 201 };
    });
    expect(result.kind).toBe('executed');
    expect(await rows(key)).toEqual([1, 3]);
    expect((await record(key))?.state).toBe('succeeded');
  });

  it('a Kysely whose transaction does not open with begin is refused with a clear error, nothing kept', async () => {
    const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge: kyselyBridge<Database>(), schema }) });
    // Stands in for a Kysely version that opens differently: every transaction read only (start transaction read only).
    const original = Kysely.prototype.transaction;
    Kysely.prototype.transaction = function (this: Kysely<unknown>) {
      return original.call(this).setAccessMode('read only');
    } as typeof original;
    try {
      const key = uniqueKey('not-begin');
      const { message, ran } = await refusedOpening(idempotency, request(key));
      expect(message).toMatch(/expected Kysely to open its transaction with begin/);
      expect([ran, await record(key)]).toEqual([false, undefined]);
    } finally {
      Kysely.prototype.transaction = original;
    }
    // The connection went back in a usable state.
    const key = uniqueKey('after-refusal');
    expect((await idempotency.runInTransaction(request(key), pay(key))).kind).toBe('executed');
  });

  it("a dialect on PostgreSQL whose connections are not Kysely's pg ones keeps Kysely's own transaction, and the bridge still works", async () => {
    const otherPool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    const other = new Kysely<Database>({ dialect: wrappedDialect(otherPool) });
    try {
      const bridge = kyselyBridge<Database>();
      // Told only once a connection is in hand: it is given back unused.
      await expect(bridge.pg!.pool(other)!.connect()).rejects.toThrow(/not on its PostgresDialect over pg/);
      const idempotency = createIdempotency({ store: postgresStore({ db: other, bridge, schema }) });
      const key = uniqueKey('wrapped');
      expect((await idempotency.runInTransaction(request(key), pay(key))).kind).toBe('executed');
      expect((await idempotency.runInTransaction(request(key), pay(key))).kind).toBe('replayed');
      expect(await rows(key)).toEqual([10]);
    } finally {
      await other.destroy();
    }
  });

  it('a Kysely not on PostgreSQL, or a Transaction as db, has no pg pool', async () => {
    const sqlite = new Kysely<Database>({
      dialect: {
        createAdapter: () => new SqliteAdapter(),
        createDriver: () => new DummyDriver(),
        createQueryCompiler: () => new SqliteQueryCompiler(),
        createIntrospector: (db) => new SqliteIntrospector(db),
      },
    });
    expect(kyselyBridge<Database>().pg?.pool(sqlite)).toBeUndefined();
    await opened.db.transaction().execute(async (trx) => {
      expect(kyselyBridge<Database>().pg?.pool(trx)).toBeUndefined();
    });
  });
});
