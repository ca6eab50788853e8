import { createIdempotency, type IdempotentResponse, isOncelyError } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/index.js';
import { createBusinessTables, ledger, openAccount } from '../support/business.js';
import { migratedSchema } from '../support/database.js';
import { createSql } from '../support/postgresjs.js';
import { blockedOnLock, gate } from '../support/wait.js';
import { transactionalBehaviours } from './behaviours.js';

const { pool: observer, schema } = migratedSchema('tx_pgjs');
const instances: postgres.Sql[] = [];

/** A postgres.js instance; `query` beside it is for the shared behaviours' own setup and checks only. */
function sqlFor(options: Parameters<typeof createSql>[0] = {}) {
  const sql = createSql({ max: 4, ...options });
  instances.push(sql);
  const query = async (text: string, params?: unknown[]) => ({ rows: [...(await sql.unsafe(text, (params ?? []) as never[]))] });
  return Object.assign(sql, { query });
}

const shared = sqlFor();
const unprepared = sqlFor({ prepare: false });

beforeAll(() => createBusinessTables(observer, schema));
afterAll(() => Promise.all(instances.map((sql) => sql.end())));

transactionalBehaviours('postgres.js', () => ({ db: shared, schema }));
// A pooler that cannot keep prepared statements: the instance's own prepare: false is respected.
transactionalBehaviours('postgres.js, prepare: false', () => ({ db: unprepared, schema }));

/** A charge as postgres.js users write it: tagged templates on the handler's tx. */
const taggedCharge =
  (account: string, amount: number) =>
  async ({ tx }: { tx: postgres.Sql }): Promise<IdempotentResponse<{ chargeId: string; amount: number }>> => {
    const [row] = await tx<{ id: string }[]>`INSERT INTO ${tx(schema)}.charges (account_id, amount) VALUES (${account}, ${amount}) RETURNING id::text AS id`;
    await tx`UPDATE ${tx(schema)}.accounts SET balance = balance - ${amount} WHERE id = ${account}`;
    return { status: 201, body: { chargeId: row!.id, amount }, resourceId: row!.id };
  };

/** Two engines on separate postgres.js instances racing for one key; the first is held inside its transaction. */
async function race(waiterName: string, options: { lockTimeoutMs?: number } = {}) {
  const account = uniqueKey('acct');
  await openAccount(observer, schema, account, 100);
  const key = uniqueKey('race');
  const request = { tenant: 'acme', operation: 'charges.create.v1', key, request: { account, amount: 10 } };
  const first = createIdempotency({ store: postgresStore({ db: shared, schema }) });
  const waiter = sqlFor({ connection: { application_name: waiterName } });
  const second = createIdempotency({ store: postgresStore({ db: waiter, schema, ...options }) });
  const inside = gate();
  const proceed = gate();
  const held = (outcome: 'commit' | 'throw') =>
    first.runInTransaction(request, async (context) => {
      const response = await taggedCharge(account, 10)(context);
      inside.open();
      await proceed.opened;
      if (outcome === 'throw') throw new Error('first attempt crashed');
      return response;
    });
  return { request, second, inside, proceed, held, account, books: () => ledger(observer, schema, account) };
}

describe('postgres.js: the handler writes with its own tagged templates', () => {
  it("tx is postgres.js's sql on the transaction's connection: its writes commit with the record, and it refuses SQL and pool methods afterwards", async () => {
    const account = uniqueKey('acct');
    await openAccount(observer, schema, account, 100);
    const engine = createIdempotency({ store: postgresStore({ db: shared, schema }) });
    const request = { tenant: 'acme', operation: 'charges.create.v1', key: uniqueKey('tagged'), request: { account, amount: 10 } };
    let kept: postgres.Sql | undefined;
    let inside: { pid: number; xmin: string; xid: string } | undefined;
    const result = await engine.runInTransaction(request, async (context) => {
      kept = context.tx;
      const [seen] = await context.tx<{ pid: number; xmin: string; xid: string }[]>`
        SELECT pg_backend_pid() AS pid, xmin::text AS xmin, (pg_current_xact_id()::text::bigint % 4294967296)::text AS xid
        FROM ${context.tx(schema)}.oncely_idempotency WHERE idempotency_key = ${request.key}`;
      inside = seen;
      return taggedCharge(account, 10)(context);
    });
    expect(result.kind).toBe('executed');
    // The claim was written by the handler's own transaction.
    expect(inside?.xmin).toBe(inside?.xid);
    expect(await ledger(observer, schema, account)).toEqual({ charges: 1, amounts: [10], balance: 90 });
    expect(() => kept!`SELECT 1`).toThrow(expect.objectContaining({ code: 'invalid_state' }));
    expect(isOncelyError((() => {
      try {
        (kept as unknown as { release(): void }).release();
      } catch (error) {
        return error;
      }
    })(), 'invalid_state')).toBe(true);
    expect((await engine.runInTransaction(request, taggedCharge(account, 10))).kind).toBe('replayed');
    expect((await ledger(observer, schema, account)).charges).toBe(1);
  });
});

describe('postgres.js: prepared statements', () => {
  it('prepare: false (a pooler that cannot keep them) leaves nothing prepared on the connection; the default prepares oncely statements once', async () => {
    const account = uniqueKey('acct');
    await openAccount(observer, schema, account, 100);
    const names = async (sql: postgres.Sql) => (await sql<{ name: string }[]>`SELECT name FROM pg_prepared_statements`).map((row) => row.name);
    for (const [prepare, expected] of [[false, 0], [true, 3]] as const) {
      // One connection, so the statements seen are the ones oncely's transactions left on it.
      const sql = sqlFor({ max: 1, prepare });
      const engine = createIdempotency({ store: postgresStore({ db: sql, schema }) });
      for (let i = 0; i < 3; i++) {
        const request = { tenant: 'acme', operation: 'charges.create.v1', key: uniqueKey('prep'), request: { account, amount: 1 } };
        expect((await engine.runInTransaction(request, taggedCharge(account, 1))).kind).toBe('executed');
      }
      expect((await names(sql)).filter((name) => name.startsWith('oncely_'))).toHaveLength(expected);
      if (!prepare) expect(await names(sql)).toEqual([]);
    }
  });
});

describe('postgres.js: fetch_types: false', () => {
  it('transactions refuse the instance with invalid_option (postgres.js would never reserve a connection); lease mode runs', async () => {
    const sql = sqlFor({ fetch_types: false, max: 2 });
    const engine = createIdempotency({ store: postgresStore({ db: sql, schema }) });
    const request = { tenant: 'acme', operation: 'charges.create.v1', key: uniqueKey('types'), request: {} };
    await expect(engine.runInTransaction(request, async () => ({ status: 201 }))).rejects.toMatchObject({ code: 'invalid_option' });
    expect((await engine.run(request, async () => ({ status: 201 }))).kind).toBe('executed');
  });
});

describe('postgres.js: transactional mode under concurrency', () => {
  it('a concurrent duplicate waits on the key, then replays the committed result', async () => {
    const { request, second, inside, proceed, held, books, account } = await race('oncely-pgjs-waiter');
    const first = held('commit');
    await inside.opened;
    const duplicate = second.runInTransaction(request, taggedCharge(account, 10));
    await blockedOnLock(observer, 'oncely-pgjs-waiter');
    proceed.open();
    const [executed, replayed] = await Promise.all([first, duplicate]);
    expect(executed.kind).toBe('executed');
    expect(replayed).toEqual({ kind: 'replayed', state: 'succeeded', response: executed.kind === 'executed' && executed.response });
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
  });

  it('when the first transaction rolls back, the waiting duplicate executes', async () => {
    const { request, second, inside, proceed, held, books, account } = await race('oncely-pgjs-rollback-waiter');
    const first = held('throw').catch((error: Error) => error.message);
    await inside.opened;
    const duplicate = second.runInTransaction(request, taggedCharge(account, 10));
    await blockedOnLock(observer, 'oncely-pgjs-rollback-waiter');
    proceed.open();
    expect(await first).toBe('first attempt crashed');
    expect((await duplicate).kind).toBe('executed');
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
  });

  it('lockTimeoutMs: a duplicate that would wait longer answers in_progress and writes nothing', async () => {
    const { request, second, inside, proceed, held, books, account } = await race('oncely-pgjs-impatient', { lockTimeoutMs: 50 });
    const first = held('commit');
    await inside.opened;
    const impatient = await second.runInTransaction(request, taggedCharge(account, 10));
    expect(impatient.kind).toBe('in_progress');
    proceed.open();
    await first;
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
  });
});

describe('postgres.js: joining the caller’s own sql.begin transaction', () => {
  it('the handler writes tagged templates on the caller’s sql; the record and the charge commit with it, or go with its rollback', async () => {
    const account = uniqueKey('acct');
    await openAccount(observer, schema, account, 100);
    const engine = createIdempotency({ store: postgresStore({ db: shared, schema }) });
    const request = (key: string) => ({ tenant: 'acme', operation: 'charges.create.v1', key, request: { account, amount: 10 } });
    const checkout = (key: string, end: 'commit' | 'rollback') =>
      shared
        .begin(async (tx) => {
          const result = await engine.runInTransaction(
            request(key),
            async (context) => {
              // The handler's tx is the caller's own transaction sql, not a wrapper of it.
              expect(context.tx).toBe(tx);
              return taggedCharge(account, 10)(context as unknown as { tx: postgres.Sql });
            },
            { tx },
          );
          if (end === 'rollback') throw Object.assign(new Error('caller rolled back'), { result });
          return result;
        })
        .catch((error: Error & { result?: unknown }) => {
          if (error.message !== 'caller rolled back') throw error;
          return error.result;
        });
    const rolledBack = uniqueKey('join');
    expect(await checkout(rolledBack, 'rollback')).toMatchObject({ kind: 'executed' });
    expect(await ledger(observer, schema, account)).toEqual({ charges: 0, amounts: [], balance: 100 });
    expect(await engine.get({ tenant: 'acme', operation: 'charges.create.v1', key: rolledBack })).toBeUndefined();
    const committed = uniqueKey('join');
    expect(await checkout(committed, 'commit')).toMatchObject({ kind: 'executed' });
    expect(await checkout(committed, 'commit')).toMatchObject({ kind: 'replayed' });
    expect(await ledger(observer, schema, account)).toEqual({ charges: 1, amounts: [10], balance: 90 });
  });
});
