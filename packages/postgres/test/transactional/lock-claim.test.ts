import { createIdempotency, type IdempotentResponse, isOncelyError } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import fc from 'fast-check';
import type pg from 'pg';
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresDb, postgresStore } from '../../src/index.js';
import { chargeHandler, createBusinessTables, ledger, openAccount } from '../support/business.js';
import { countingPool, messages } from '../support/counting-pool.js';
import { createPool, migratedSchema, rawRecord } from '../support/database.js';
import { createSql } from '../support/postgresjs.js';
import { blockedOnLock, gate } from '../support/wait.js';
import { transactionalBehaviours } from './behaviours.js';

const { pool, schema } = migratedSchema('tx_lock_claim');
const pools: pg.Pool[] = [];
const instances: postgres.Sql[] = [];

const namedPool = (name: string, options: pg.PoolConfig = {}) => {
  const named = createPool({ max: 3, application_name: name, ...options });
  pools.push(named);
  return named;
};

/** A postgres.js instance with the `query` the shared behaviours use for their own setup and checks. */
function sqlFor(options: Parameters<typeof createSql>[0] = {}) {
  const sql = createSql({ max: 4, ...options });
  instances.push(sql);
  const query = async (text: string, params?: unknown[]) => ({ rows: [...(await sql.unsafe(text, (params ?? []) as never[]))] });
  return Object.assign(sql, { query });
}

const shared = sqlFor();
const unprepared = sqlFor({ prepare: false });

beforeAll(() => createBusinessTables(pool, schema));
afterAll(() => Promise.all([...pools.map((extra) => extra.end()), ...instances.map((sql) => sql.end())]));

transactionalBehaviours('lockClaim, pg.Pool', () => ({ db: pool, schema }), true);
transactionalBehaviours('lockClaim, pg.Pool, preparedStatements: false', () => ({ db: pool, schema, preparedStatements: false }), true);
transactionalBehaviours('lockClaim, postgres.js', () => ({ db: shared, schema }), true);
transactionalBehaviours('lockClaim, postgres.js, prepare: false', () => ({ db: unprepared, schema }), true);

const lockStore = (db: PostgresDb, options: { lockTimeoutMs?: number } = {}) => postgresStore({ db, schema, lockClaim: true, ...options });
const scopeOf = (key: string) => ({ tenant: 'acme', principal: '', operation: 'charges.create.v1', key });

async function fixture(balance = 100) {
  const account = uniqueKey('acct');
  await openAccount(pool, schema, account, balance);
  const key = uniqueKey('lock');
  const request = { tenant: 'acme', operation: 'charges.create.v1', key, request: { account, amount: 10 } };
  const books = () => ledger(pool, schema, account);
  const record = () => rawRecord(pool, lockStore(pool).table, scopeOf(key));
  return { account, key, request, books, record };
}

/** A first attempt held inside its transaction, after its business write, until `proceed` opens. */
function holder(db: PostgresDb, request: Awaited<ReturnType<typeof fixture>>['request'], account: string) {
  const inside = gate();
  const proceed = gate();
  const engine = createIdempotency({ store: lockStore(db) });
  let pid = 0;
  const run = (outcome: 'commit' | 'throw') =>
    engine.runInTransaction(request, async (context): Promise<IdempotentResponse> => {
      const response = await chargeHandler(schema, account, 10)(context);
      pid = (await context.tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      inside.open();
      await proceed.opened;
      if (outcome === 'throw') throw new Error('first attempt crashed');
      return response;
    });
  return { inside, proceed, run, pid: () => pid };
}

describe('lockClaim on pg.Pool', () => {
  it('a first request is the bare transaction\'s 3 messages (lock, read and check travel with BEGIN); a replay is 1 that opens no transaction', async () => {
    const { account, request, books } = await fixture();
    const counted = countingPool(namedPool('lock_count', { max: 1 }));
    const engine = createIdempotency({ store: lockStore(counted) });
    await engine.runInTransaction(request, chargeHandler(schema, account, 10));
    const [opening, ...rest] = messages(counted.sent);
    // lock + read + unheld + BEGIN, the handler's INSERT and UPDATE, insert + COMMIT.
    expect(opening).toMatch(/^(PREPARE\+){4}(EXECUTE\+){3}BEGIN$/);
    expect(rest).toEqual(['INSERT', 'UPDATE', 'EXECUTE+COMMIT']);
    counted.sent.length = 0;
    expect((await engine.runInTransaction(request, chargeHandler(schema, account, 10))).kind).toBe('replayed');
    // One message: the check stopped it before BEGIN, the read's row answered, and the block rolled back.
    expect(messages(counted.sent)).toEqual(['EXECUTE+EXECUTE+EXECUTE+BEGIN']);
    expect((await books()).charges).toBe(1);
  });

  it('no row exists until COMMIT: the handler sees none, and the committed record is written once, completed', async () => {
    const { account, key, request, record } = await fixture();
    const engine = createIdempotency({ store: lockStore(pool) });
    let seen = -1;
    await engine.runInTransaction(request, async (context) => {
      seen = (await context.tx.query(`SELECT 1 FROM ${lockStore(pool).table} WHERE idempotency_key = $1`, [key])).rows.length;
      return chargeHandler(schema, account, 10)(context);
    });
    expect(seen).toBe(0);
    const row = (await pool.query(`SELECT state, fence, lease_token, xmax::text AS xmax FROM ${lockStore(pool).table} WHERE idempotency_key = $1`, [key])).rows[0];
    // xmax 0: inserted and never updated.
    expect(row).toEqual({ state: 'succeeded', fence: 1, lease_token: null, xmax: '0' });
    expect((await record())?.state).toBe('succeeded');
  });

  it('a concurrent duplicate waits on the lock, then replays the committed result', async () => {
    const { account, request, books } = await fixture();
    const first = holder(pool, request, account);
    const running = first.run('commit');
    await first.inside.opened;
    const waiter = namedPool('lock-waiter');
    const duplicate = createIdempotency({ store: lockStore(waiter) }).runInTransaction(request, chargeHandler(schema, account, 10));
    await blockedOnLock(pool, 'lock-waiter');
    first.proceed.open();
    const [executed, replayed] = await Promise.all([running, duplicate]);
    expect(executed.kind).toBe('executed');
    expect(replayed).toEqual({ kind: 'replayed', state: 'succeeded', response: executed.kind === 'executed' && executed.response });
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
  });

  it('the holder killed mid-transaction (pg_terminate_backend): no record, the lock is released, and the waiting duplicate executes', async () => {
    const { account, request, books, record } = await fixture();
    const doomed = namedPool('lock-doomed', { max: 1 });
    doomed.on('error', () => undefined);
    const first = holder(doomed, request, account);
    const running = first.run('commit').catch((error: unknown) => error);
    await first.inside.opened;
    const waiter = namedPool('lock-survivor');
    const duplicate = createIdempotency({ store: lockStore(waiter) }).runInTransaction(request, chargeHandler(schema, account, 10));
    await blockedOnLock(pool, 'lock-survivor');
    expect((await pool.query('SELECT pg_terminate_backend($1) AS terminated', [first.pid()])).rows[0].terminated).toBe(true);
    expect((await duplicate).kind).toBe('executed');
    first.proceed.open();
    expect(isOncelyError(await running, 'storage_error')).toBe(true);
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
    expect((await record())?.state).toBe('succeeded');
  });

  it('lockTimeoutMs: a duplicate that would wait longer answers in_progress, writes nothing, and leaves lock_timeout as it was', async () => {
    const { account, request, books, record } = await fixture();
    const first = holder(pool, request, account);
    const running = first.run('commit');
    await first.inside.opened;
    const impatientPool = namedPool('lock-impatient', { max: 1 });
    const impatient = await createIdempotency({ store: lockStore(impatientPool, { lockTimeoutMs: 50 }) }).runInTransaction(
      request,
      chargeHandler(schema, account, 10),
    );
    expect(impatient.kind).toBe('in_progress');
    expect(await record()).toBeUndefined();
    expect((await impatientPool.query('SHOW lock_timeout')).rows[0].lock_timeout).toBe((await pool.query('SHOW lock_timeout')).rows[0].lock_timeout);
    first.proceed.open();
    expect((await running).kind).toBe('executed');
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
  });

  it("lockTimeoutMs bounds only the lock: the handler's own statements keep the session's lock_timeout", async () => {
    const { account, request } = await fixture();
    let seen: string | undefined;
    const result = await createIdempotency({ store: lockStore(pool, { lockTimeoutMs: 50 }) }).runInTransaction(request, async (context) => {
      seen = (await context.tx.query<{ lock_timeout: string }>('SHOW lock_timeout')).rows[0]?.lock_timeout;
      return chargeHandler(schema, account, 10)(context);
    });
    expect(result.kind).toBe('executed');
    expect(seen).toBe((await pool.query('SHOW lock_timeout')).rows[0].lock_timeout);
  });

  it('a live lease-mode record is in_progress for a lock claim, which writes nothing', async () => {
    const { account, request, books } = await fixture();
    const engine = createIdempotency({ store: lockStore(pool) });
    const leaseHeld = gate();
    const finish = gate();
    const leased = engine.run(request, async () => {
      leaseHeld.open();
      await finish.opened;
      return { status: 201 };
    });
    await leaseHeld.opened;
    expect((await engine.runInTransaction(request, chargeHandler(schema, account, 10))).kind).toBe('in_progress');
    finish.open();
    await leased;
    expect((await books()).charges).toBe(0);
  });

  it('a lapsed lease of the same request is taken over: fence 2, and the saved record replaces it', async () => {
    const { account, key, request, record } = await fixture();
    const engine = createIdempotency({ store: lockStore(pool), leaseMs: 50 });
    const leaseHeld = gate();
    const finish = gate();
    const leased = engine.run(request, async () => {
      leaseHeld.open();
      await finish.opened;
      return { status: 201 };
    });
    await leaseHeld.opened;
    await pool.query(`UPDATE ${lockStore(pool).table} SET lease_expires_at = statement_timestamp() - interval '1 second' WHERE idempotency_key = $1`, [key]);
    let fence = 0;
    const taken = await engine.runInTransaction(request, async (context) => {
      fence = context.fence;
      return chargeHandler(schema, account, 10)(context);
    });
    expect(taken.kind).toBe('executed');
    expect(fence).toBe(2);
    expect(await record()).toMatchObject({ state: 'succeeded', fence: 2 });
    finish.open();
    await leased.catch(() => undefined);
  });

  it('a row another writer puts under the key during the transaction fails the save: lease_lost, and the business writes roll back', async () => {
    const { account, key, request, books, record } = await fixture();
    const engine = createIdempotency({ store: lockStore(pool) });
    const other = createIdempotency({ store: postgresStore({ db: pool, schema }) });
    const finish = gate();
    let leased: Promise<unknown> | undefined;
    const thrown = await engine
      .runInTransaction(request, async (context) => {
        const response = await chargeHandler(schema, account, 10)(context);
        // A lease-mode attempt does not take the lock: it claims the key outside this transaction.
        const leaseHeld = gate();
        leased = other.run(request, async () => {
          leaseHeld.open();
          await finish.opened;
          return { status: 201 };
        });
        await leaseHeld.opened;
        return response;
      })
      .catch((error: unknown) => error);
    expect(isOncelyError(thrown, 'lease_lost')).toBe(true);
    expect(await books()).toEqual({ charges: 0, amounts: [], balance: 100 });
    expect((await record())?.state).toBe('in_progress');
    finish.open();
    await leased;
    expect((await rawRecord(pool, lockStore(pool).table, scopeOf(key)))?.state).toBe('succeeded');
  });

  it('an expired record is claimed afresh: fence 1, created again', async () => {
    const { account, key, request, record } = await fixture();
    const engine = createIdempotency({ store: lockStore(pool) });
    expect((await engine.runInTransaction(request, chargeHandler(schema, account, 10))).kind).toBe('executed');
    await pool.query(`UPDATE ${lockStore(pool).table} SET expires_at = statement_timestamp() - interval '1 second', fence = 3 WHERE idempotency_key = $1`, [key]);
    expect((await engine.runInTransaction(request, chargeHandler(schema, account, 10))).kind).toBe('executed');
    expect(await record()).toMatchObject({ state: 'succeeded', fence: 1 });
  });

  it('under REPEATABLE READ the claim row is used instead: a waiting duplicate restarts on the serialization failure and replays', async () => {
    const { account, request, books } = await fixture();
    const first = holder(pool, request, account);
    const running = first.run('commit');
    await first.inside.opened;
    const waiter = namedPool('lock-repeatable', { options: '-c default_transaction_isolation=repeatable\\ read' });
    const duplicate = createIdempotency({ store: lockStore(waiter) }).runInTransaction(request, chargeHandler(schema, account, 10));
    await blockedOnLock(pool, 'lock-repeatable');
    first.proceed.open();
    await running;
    expect((await duplicate).kind).toBe('replayed');
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
  });
});

describe('lockClaim: concurrent duplicates (property)', () => {
  for (const [name, db] of [
    ['pg.Pool', () => namedPool('lock-race', { max: 8 })],
    ['postgres.js', () => sqlFor({ max: 8 })],
  ] as const) {
    it(`${name}: however many duplicates of however many keys race, each key's effect commits exactly once and every caller gets its response`, async () => {
      const engine = createIdempotency({ store: lockStore(db()) });
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 2, max: 8 }), async (keys, duplicates) => {
          const cases = await Promise.all(Array.from({ length: keys }, () => fixture(1_000)));
          const results = await Promise.all(
            cases.flatMap(({ account, request }) =>
              Array.from({ length: duplicates }, () => engine.runInTransaction(request, chargeHandler(schema, account, 10))),
            ),
          );
          for (const [index, { books }] of cases.entries()) {
            expect((await books()).charges).toBe(1);
            const mine = results.slice(index * duplicates, (index + 1) * duplicates);
            expect(mine.filter((result) => result.kind === 'executed')).toHaveLength(1);
            expect(mine.every((result) => result.kind === 'executed' || result.kind === 'replayed')).toBe(true);
          }
        }),
        { numRuns: 15 },
      );
    });
  }
});
