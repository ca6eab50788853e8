import { PGlite } from '@electric-sql/pglite';
import { createIdempotency, isOncelyError } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, postgresStore } from '../../src/index.js';
import { charge, createBusinessTables, ledger, openAccount } from '../support/business.js';
import { inClientTransaction, migratedSchema, rawRecord } from '../support/database.js';

const { pool, schema, table } = migratedSchema('join', { max: 12 });
beforeAll(() => createBusinessTables(pool, schema));

const request = (key: string, amount = 10) => ({ tenant: 'acme', principal: 'alice', operation: 'charges.create.v1', key, request: { amount } });
const scopeOf = (key: string) => ({ tenant: 'acme', principal: 'alice', operation: 'charges.create.v1', key });

/** A fresh account with 100 and a fresh key: each scenario owns its rows. */
async function scenario() {
  const account = uniqueKey('acct');
  await openAccount(pool, schema, account, 100);
  return { account, key: uniqueKey('join'), books: () => ledger(pool, schema, account) };
}

/** The application's own transaction on a client of the pool. */
const inTransaction = <T>(body: (client: import('pg').PoolClient) => Promise<T>) => inClientTransaction(pool, body);

describe('joining a pg transaction the application opened: runInTransaction(request, handler, { tx: client })', () => {
  const idempotency = createIdempotency({ store: postgresStore({ db: pool, schema }) });

  it("claim, handler and saved response commit with the caller's own writes, on its COMMIT; a replay joins and writes nothing", async () => {
    const { account, key, books } = await scenario();
    const result = await inTransaction(async (client) => {
      await client.query(`UPDATE "${schema}".accounts SET balance = balance + 1 WHERE id = $1`, [account]);
      const joined = await idempotency.runInTransaction(request(key), async ({ tx }) => ({ status: 201, body: { id: await charge(tx, schema, account, 10) } }), { tx: client });
      // Not visible to anyone else before the caller commits.
      expect(await rawRecord(pool, table, scopeOf(key))).toBeUndefined();
      return joined;
    });
    expect(result.kind).toBe('executed');
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 91 });
    expect((await rawRecord(pool, table, scopeOf(key)))?.state).toBe('succeeded');
    const replay = await inTransaction((client) => idempotency.runInTransaction(request(key), async () => ({ status: 500 }), { tx: client }));
    expect(replay).toEqual({ kind: 'replayed', state: 'succeeded', response: result.kind === 'executed' ? result.response : undefined });
    expect((await books()).charges).toBe(1);
  });

  it("a handler error, a released outcome and a busy key undo only oncely's part: the caller's transaction goes on and commits", async () => {
    const { account, key, books } = await scenario();
    const busyKey = uniqueKey('busy');
    // Another transaction holds busyKey's claim while the caller joins it with a lock timeout.
    const holder = await pool.connect();
    await holder.query('BEGIN');
    const bounded = createIdempotency({ store: postgresStore({ db: pool, schema, lockTimeoutMs: 50 }) });
    await bounded.runInTransaction(request(busyKey), async () => ({ status: 201 }), { tx: holder });
    try {
      await inTransaction(async (client) => {
        const failure = await idempotency
          .runInTransaction(request(key), async ({ tx }) => {
            await charge(tx, schema, account, 10);
            // A statement error aborts the transaction; the savepoint makes it usable again.
            await tx.query('SELECT 1/0');
            return { status: 201 };
          }, { tx: client })
          .catch((error: unknown) => error);
        expect(String((failure as Error).message)).toMatch(/division by zero/);
        const released = await idempotency.runInTransaction(request(key), async ({ tx }) => {
          await charge(tx, schema, account, 20);
          return { status: 503 };
        }, { tx: client });
        expect(released).toMatchObject({ kind: 'executed', state: 'released' });
        const busy = await bounded.runInTransaction(request(busyKey), async () => ({ status: 201 }), { tx: client });
        expect(busy.kind).toBe('in_progress');
        await client.query(`UPDATE "${schema}".accounts SET balance = balance + 5 WHERE id = $1`, [account]);
      });
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(await books()).toEqual({ charges: 0, amounts: [], balance: 105 });
    expect(await rawRecord(pool, table, scopeOf(key))).toBeUndefined();
  });

  it("the caller's ROLLBACK takes the record and the handler's writes with it: the retry executes", async () => {
    const { account, key, books } = await scenario();
    await expect(
      inTransaction(async (client) => {
        await idempotency.runInTransaction(request(key), async ({ tx }) => ({ status: 201, body: { id: await charge(tx, schema, account, 10) } }), { tx: client });
        throw new Error('the caller rolls back');
      }),
    ).rejects.toThrow('the caller rolls back');
    expect(await rawRecord(pool, table, scopeOf(key))).toBeUndefined();
    expect((await idempotency.runInTransaction(request(key), async ({ tx }) => ({ status: 201, body: { id: await charge(tx, schema, account, 10) } }))).kind).toBe('executed');
    expect((await books()).charges).toBe(1);
  });

  it('10 concurrent joins of one key in their own caller transactions: one executes, the others replay once it commits', async () => {
    const { account, key, books } = await scenario();
    let executions = 0;
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        inTransaction((client) =>
          idempotency.runInTransaction(request(key), async ({ tx }) => {
            executions += 1;
            return { status: 201, body: { id: await charge(tx, schema, account, 10) } };
          }, { tx: client }),
        ),
      ),
    );
    expect(executions).toBe(1);
    expect(results.filter((result) => result.kind === 'replayed')).toHaveLength(9);
    expect((await books()).charges).toBe(1);
  });

  it('a join given something that is not a transaction is refused before any SQL', async () => {
    for (const tx of [null, 42, {}]) {
      const thrown = await idempotency.runInTransaction(request(uniqueKey('bad')), async () => ({ status: 201 }), { tx: tx as never }).catch((error: unknown) => error);
      expect(isOncelyError(thrown) && thrown.code).toBe('invalid_option');
    }
  });
});

describe('joining a PGlite transaction: runInTransaction(request, handler, { tx }) inside db.transaction', () => {
  const db = new PGlite();
  beforeAll(async () => {
    await migrate(db, { schema: 'joined' });
    await createBusinessTables(db, 'joined');
    await openAccount(db, 'joined', 'acct', 100);
  });
  afterAll(() => db.close());

  it('commits with the caller, replays after; a handler error leaves the caller transaction usable', async () => {
    const idempotency = createIdempotency({ store: postgresStore({ db, schema: 'joined' }) });
    const key = uniqueKey('pglite-join');
    const first = await db.transaction((tx) =>
      idempotency.runInTransaction(request(key), async ({ tx: inner }) => ({ status: 201, body: { id: await charge(inner, 'joined', 'acct', 10) } }), { tx }),
    );
    expect(first.kind).toBe('executed');
    const failed = uniqueKey('pglite-join-error');
    await db.transaction(async (tx) => {
      await expect(
        idempotency.runInTransaction(request(failed), async ({ tx: inner }) => {
          await charge(inner, 'joined', 'acct', 10);
          throw new Error('handler failed');
        }, { tx }),
      ).rejects.toThrow('handler failed');
      await tx.query(`UPDATE joined.accounts SET balance = balance + 1 WHERE id = 'acct'`);
    });
    expect(await ledger(db, 'joined', 'acct')).toEqual({ charges: 1, amounts: [10], balance: 91 });
    expect((await db.transaction((tx) => idempotency.runInTransaction(request(key), async () => ({ status: 500 }), { tx }))).kind).toBe('replayed');
  });
});
