import { createIdempotency, type IdempotentResponse } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresDb, postgresStore } from '../../src/index.js';
import { charge, chargeHandler, createBusinessTables, ledger, openAccount } from '../support/business.js';
import { countingPool, messages } from '../support/counting-pool.js';
import { createPool, migratedSchema, rawRecord } from '../support/database.js';
import { blockedOnLock, gate, until } from '../support/wait.js';
import { transactionalBehaviours } from './behaviours.js';

const { pool, schema } = migratedSchema('tx_pool');
const extraPools: pg.Pool[] = [];

/** A pool whose backends carry `name`, so a test can see them wait in pg_stat_activity. */
const namedPool = (name: string, options: pg.PoolConfig = {}) => {
  const named = createPool({ max: 3, application_name: name, ...options });
  extraPools.push(named);
  return named;
};

beforeAll(() => createBusinessTables(pool, schema));
afterAll(() => Promise.all(extraPools.map((extra) => extra.end())));

transactionalBehaviours('pg.Pool', () => ({ db: pool, schema }));
// Statements written out with literals, nothing PREPAREd (for poolers that cannot keep prepared statements).
transactionalBehaviours('pg.Pool, preparedStatements: false', () => ({ db: pool, schema, preparedStatements: false }));

/** Two engines on separate pools racing for one key; the first is held inside its transaction. */
async function race(waiterPool: PostgresDb, options: { lockTimeoutMs?: number } = {}) {
  const account = uniqueKey('acct');
  await openAccount(pool, schema, account, 100);
  const key = uniqueKey('race');
  const request = { tenant: 'acme', operation: 'charges.create.v1', key, request: { account, amount: 10 } };
  const first = createIdempotency({ store: postgresStore({ db: pool, schema }) });
  const second = createIdempotency({ store: postgresStore({ db: waiterPool, schema, ...options }) });
  const inside = gate();
  const proceed = gate();
  const held = (outcome: 'commit' | 'throw') =>
    first.runInTransaction(request, async (context): Promise<IdempotentResponse> => {
      const response = await chargeHandler(schema, account, 10)(context);
      inside.open();
      await proceed.opened;
      if (outcome === 'throw') throw new Error('first attempt crashed');
      return response;
    });
  const books = () => ledger(pool, schema, account);
  return { request, second, inside, proceed, held, books, account };
}

describe('pg.Pool: transactional mode under concurrency', () => {
  it('a concurrent duplicate waits on the key, then replays the committed result', async () => {
    const waiter = namedPool('oncely-tx-waiter');
    const { request, second, inside, proceed, held, books, account } = await race(waiter);
    const first = held('commit');
    await inside.opened;
    const duplicate = second.runInTransaction(request, chargeHandler(schema, account, 10));
    await blockedOnLock(pool, 'oncely-tx-waiter');
    proceed.open();
    const [executed, replayed] = await Promise.all([first, duplicate]);
    expect(executed.kind).toBe('executed');
    expect(replayed).toEqual({ kind: 'replayed', state: 'succeeded', response: executed.kind === 'executed' && executed.response });
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
  });

  it('when the first transaction rolls back, the waiting duplicate executes', async () => {
    const waiter = namedPool('oncely-tx-rollback-waiter');
    const { request, second, inside, proceed, held, books, account } = await race(waiter);
    const first = held('throw').catch((error: Error) => error.message);
    await inside.opened;
    const duplicate = second.runInTransaction(request, chargeHandler(schema, account, 10));
    await blockedOnLock(pool, 'oncely-tx-rollback-waiter');
    proceed.open();
    expect(await first).toBe('first attempt crashed');
    expect((await duplicate).kind).toBe('executed');
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
  });

  it('lockTimeoutMs: a duplicate that would wait longer answers in_progress and writes nothing', async () => {
    const waiter = namedPool('oncely-tx-impatient');
    const { request, second, inside, proceed, held, books, account } = await race(waiter, { lockTimeoutMs: 50 });
    const first = held('commit');
    await inside.opened;
    const impatient = await second.runInTransaction(request, chargeHandler(schema, account, 10));
    expect(impatient.kind).toBe('in_progress');
    proceed.open();
    await first;
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
  });

  it("lockTimeoutMs bounds only the claim: the handler's own statements keep the session's lock_timeout", async () => {
    const { request, inside, proceed, books, account } = await race(pool);
    const bounded = createIdempotency({ store: postgresStore({ db: pool, schema, lockTimeoutMs: 50 }) });
    let seen: string | undefined;
    const result = bounded.runInTransaction(request, async ({ tx }) => {
      seen = (await tx.query<{ lock_timeout: string }>('SHOW lock_timeout')).rows[0]?.lock_timeout;
      inside.open();
      await proceed.opened;
      await charge(tx, schema, account, 10);
      return { status: 201 };
    });
    await inside.opened;
    proceed.open();
    expect((await result).kind).toBe('executed');
    expect(seen).toBe((await pool.query('SHOW lock_timeout')).rows[0].lock_timeout);
    expect((await books()).charges).toBe(1);
  });

  for (const isolation of ['repeatable read', 'serializable']) {
    it(`under ${isolation.toUpperCase()} a waiting duplicate restarts on the serialization failure and replays`, async () => {
      const name = `oncely-tx-${isolation.replace(' ', '-')}`;
      const waiter = namedPool(name, { options: `-c default_transaction_isolation=${isolation.replace(' ', '\\ ')}` });
      const { request, second, inside, proceed, held, books, account } = await race(waiter);
      const first = held('commit');
      await inside.opened;
      const duplicate = second.runInTransaction(request, chargeHandler(schema, account, 10));
      await blockedOnLock(pool, name);
      proceed.open();
      await first;
      expect((await duplicate).kind).toBe('replayed');
      expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
    });
  }

  it('a record a lease-mode attempt holds is in_progress for a transactional attempt, which writes nothing', async () => {
    const account = uniqueKey('acct');
    await openAccount(pool, schema, account, 100);
    const engine = createIdempotency({ store: postgresStore({ db: pool, schema }) });
    const request = { tenant: 'acme', operation: 'charges.create.v1', key: uniqueKey('mixed'), request: { account, amount: 10 } };
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
    expect((await ledger(pool, schema, account)).charges).toBe(0);
  });
});

describe('pg.Pool: statements added to the business transaction', () => {
  it('the claim is the first write of the transaction BEGIN opens', async () => {
    const engine = createIdempotency({ store: postgresStore({ db: pool, schema }) });
    const store = postgresStore({ db: pool, schema });
    const request = { tenant: 'acme', operation: 'charges.create.v1', key: uniqueKey('xid'), request: {} };
    let seen: { xmin: string; xid: string } | undefined;
    await engine.runInTransaction(request, async ({ tx }) => {
      const { rows } = await tx.query<{ xmin: string; xid: string }>(
        `SELECT xmin::text AS xmin, (pg_current_xact_id()::text::bigint % 4294967296)::text AS xid FROM ${store.table} WHERE idempotency_key = $1`,
        [request.key],
      );
      seen = rows[0];
      return { status: 201 };
    });
    // The claim, sent before BEGIN in the same message, was written by the handler's own transaction.
    expect(seen?.xmin).toBe(seen?.xid);
  });

  it('a first request adds no round trip to the business transaction; a replay is one message that opens no transaction', async () => {
    const account = uniqueKey('acct');
    await openAccount(pool, schema, account, 100);
    // A connection of its own, which has prepared nothing yet.
    const counted = countingPool(namedPool('tx_count', { max: 1 }));
    const engine = createIdempotency({ store: postgresStore({ db: counted, schema }) });
    const request = { tenant: 'acme', operation: 'charges.create.v1', key: uniqueKey('count'), request: { account, amount: 10 } };
    await engine.runInTransaction(request, chargeHandler(schema, account, 10));
    // claim + check + BEGIN, the handler's INSERT and UPDATE, save + COMMIT: the bare transaction's 4 messages, on one connection.
    const [opening, ...rest] = messages(counted.sent);
    expect(opening).toMatch(/^(PREPARE\+){3}(EXECUTE\+){2}BEGIN$/);
    expect(rest).toEqual(['INSERT', 'UPDATE', 'EXECUTE+COMMIT']);
    expect(new Set(counted.sent.map((sent) => sent.connection)).size).toBe(1);
    counted.sent.length = 0;
    const table = postgresStore({ db: pool, schema }).table;
    const version = `SELECT xmin::text || ctid::text AS v FROM ${table} WHERE idempotency_key = $1`;
    const before = (await pool.query<{ v: string }>(version, [request.key])).rows[0]?.v;
    const replay = await engine.runInTransaction(request, chargeHandler(schema, account, 10));
    expect(replay.kind).toBe('replayed');
    // One message; the claim answered the record and its check failed, so BEGIN never ran and nothing is left to roll back.
    expect(messages(counted.sent)).toEqual(['EXECUTE+EXECUTE+BEGIN']);
    // The claim wrote nothing over the completed record: the row version is the one the first request committed.
    expect((await pool.query<{ v: string }>(version, [request.key])).rows[0]?.v).toBe(before);
    expect((await ledger(pool, schema, account)).charges).toBe(1);
    expect((await rawRecord(pool, postgresStore({ db: pool, schema }).table, { ...request, principal: '' }))?.state).toBe('succeeded');
  });
});

describe('pg.Pool: while replays dominate', () => {
  it('a replay is one pooled read: no connection held, no message, no transaction; first requests bring the claim-first message back', async () => {
    const account = uniqueKey('acct');
    await openAccount(pool, schema, account, 1_000);
    const counted = countingPool(namedPool('tx_replays', { max: 1 }));
    const engine = createIdempotency({ store: postgresStore({ db: counted, schema }) });
    const request = { tenant: 'acme', operation: 'charges.create.v1', key: uniqueKey('hot'), request: { account, amount: 10 } };
    await engine.runInTransaction(request, chargeHandler(schema, account, 10));
    for (let i = 0; i < 16; i++) expect((await engine.runInTransaction(request, chargeHandler(schema, account, 10))).kind).toBe('replayed');
    counted.sent.length = 0;
    expect((await engine.runInTransaction(request, chargeHandler(schema, account, 10))).kind).toBe('replayed');
    // Connection 0 is pool.query: the read went out as a statement of its own, with no session checked out.
    expect(counted.sent.map((sent) => [sent.connection, messages([sent])[0]])).toEqual([[0, 'SELECT']]);
    // A first request meanwhile pays that read, then claims as before; once first requests dominate again, it claims first.
    const fresh = () => ({ ...request, key: uniqueKey('fresh') });
    counted.sent.length = 0;
    expect((await engine.runInTransaction(fresh(), chargeHandler(schema, account, 10))).kind).toBe('executed');
    expect(messages(counted.sent)).toEqual(['SELECT', 'EXECUTE+EXECUTE+BEGIN', 'INSERT', 'UPDATE', 'EXECUTE+COMMIT']);
    for (let i = 0; i < 16; i++) await engine.runInTransaction(fresh(), chargeHandler(schema, account, 10));
    counted.sent.length = 0;
    expect((await engine.runInTransaction(fresh(), chargeHandler(schema, account, 10))).kind).toBe('executed');
    expect(messages(counted.sent)).toEqual(['EXECUTE+EXECUTE+BEGIN', 'INSERT', 'UPDATE', 'EXECUTE+COMMIT']);
    expect((await ledger(pool, schema, account)).charges).toBe(19);
  });

  it('reading first answers only a completed record: another body is a mismatch, a lapsed lease is taken over', async () => {
    const account = uniqueKey('acct');
    await openAccount(pool, schema, account, 1_000);
    const store = postgresStore({ db: pool, schema });
    const engine = createIdempotency({ store });
    const request = { tenant: 'acme', operation: 'charges.create.v1', key: uniqueKey('hot'), request: { account, amount: 10 } };
    await engine.runInTransaction(request, chargeHandler(schema, account, 10));
    for (let i = 0; i < 16; i++) await engine.runInTransaction(request, chargeHandler(schema, account, 10));
    expect(await engine.runInTransaction({ ...request, request: { account, amount: 99 } }, chargeHandler(schema, account, 99))).toEqual({ kind: 'mismatch' });
    // A lease-mode owner that stopped renewing: the record is in progress, and the same request takes it over.
    const input = { scope: { tenant: 'acme', principal: '', operation: 'charges.create.v1', key: uniqueKey('lapsed') }, fingerprint: 'fp', token: 'gone', leaseMs: 1, retentionMs: 60_000 };
    expect((await store.claim(input)).kind).toBe('claimed');
    await until('the lease lapsed', async () => ((await store.get(input.scope)) as { leaseRemainingMs?: number } | undefined)?.leaseRemainingMs === 0);
    const claims: string[] = [];
    await store.transaction({ ...input, token: 'next', leaseMs: 30_000 }, async (claim) => {
      claims.push(claim.kind);
      return { action: 'rollback', value: undefined };
    });
    expect(claims).toEqual(['claimed']);
  });
});
