import { createIdempotency, isOncelyError } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import { describe, expect, it } from 'vitest';
import { type PostgresDb, type PostgresTx, postgresStore } from '../../src/index.js';
import { charge, chargeHandler, ledger, openAccount } from '../support/business.js';
import { rawRecord } from '../support/database.js';

type Db = PostgresDb & { query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }> };

/** The database under test, with the idempotency and business tables already in `schema`. */
export interface TransactionalSetup {
  readonly db: Db;
  readonly schema: string;
  /** The store option; default true. */
  readonly preparedStatements?: boolean;
}

/**
 * Transactional mode, one attempt after another: what every driver (pool, client, PGlite) must do.
 * Each test opens its own account and key, so tests share the tables but never a row.
 */
export function transactionalBehaviours(name: string, setup: () => TransactionalSetup, lockClaim = false): void {
  const fixture = async (balance = 100) => {
    const { db, schema, preparedStatements } = setup();
    const account = uniqueKey('acct');
    await openAccount(db, schema, account, balance);
    const store = postgresStore({ db, schema, preparedStatements, lockClaim });
    const engine = createIdempotency({ store });
    const request = (amount: number, key = uniqueKey('pay')) => ({
      tenant: 'acme',
      principal: 'alice',
      operation: 'charges.create.v1',
      key,
      request: { account, amount },
    });
    const books = () => ledger(db, schema, account);
    const record = (key: string) =>
      rawRecord(db, store.table, { tenant: 'acme', principal: 'alice', operation: 'charges.create.v1', key });
    return { db, schema, account, store, engine, request, books, record };
  };

  describe(`${name}: transactional mode`, () => {
    it('commits the claim, the business writes and the saved result together, then replays', async () => {
      const { engine, request, books, record, schema, account } = await fixture();
      const first = request(10);
      const executed = await engine.runInTransaction(first, chargeHandler(schema, account, 10));
      expect(executed.kind).toBe('executed');
      expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
      expect((await record(first.key))?.state).toBe('succeeded');
      const replay = await engine.runInTransaction(first, chargeHandler(schema, account, 10));
      expect(replay).toEqual({ kind: 'replayed', state: 'succeeded', response: executed.kind === 'executed' && executed.response });
      expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
    });

    it('a handler error rolls back its writes, leaves no record, reaches the caller unchanged, and the retry executes', async () => {
      const { engine, request, books, record, schema, account } = await fixture();
      const attempt = request(10);
      const failure = new Error('card network timeout');
      const thrown = await engine
        .runInTransaction(attempt, async (context) => {
          await chargeHandler(schema, account, 10)(context);
          throw failure;
        })
        .catch((error: unknown) => error);
      expect(thrown).toBe(failure);
      expect(await books()).toEqual({ charges: 0, amounts: [], balance: 100 });
      expect(await record(attempt.key)).toBeUndefined();
      expect((await engine.runInTransaction(attempt, chargeHandler(schema, account, 10))).kind).toBe('executed');
      expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
    });

    it('an outcome the policy releases (503) rolls back the business writes too', async () => {
      const { engine, request, books, record, schema, account } = await fixture();
      const attempt = request(10);
      const result = await engine.runInTransaction(attempt, async (context) => {
        await chargeHandler(schema, account, 10)(context);
        return { status: 503, body: { retry: true } };
      });
      expect(result).toEqual({ kind: 'executed', state: 'released', response: { status: 503, body: { retry: true } } });
      expect(await books()).toEqual({ charges: 0, amounts: [], balance: 100 });
      expect(await record(attempt.key)).toBeUndefined();
    });

    it('a final failure (402) commits with its writes and is replayed', async () => {
      const { engine, request, books, schema, account } = await fixture();
      const attempt = request(0);
      const declined = async (context: { tx: PostgresTx }) => {
        await chargeHandler(schema, account, 0)(context as never);
        return { status: 402, body: { type: 'card_declined' } };
      };
      expect((await engine.runInTransaction(attempt, declined)).kind).toBe('executed');
      const replay = await engine.runInTransaction(attempt, declined);
      expect(replay).toEqual({ kind: 'replayed', state: 'failed_final', response: { status: 402, body: { type: 'card_declined' } } });
      expect((await books()).charges).toBe(1);
    });

    it('the same key with a different body answers mismatch and writes nothing', async () => {
      const { engine, request, books, schema, account } = await fixture();
      const first = request(10);
      await engine.runInTransaction(first, chargeHandler(schema, account, 10));
      const changed = request(100, first.key);
      expect(await engine.runInTransaction(changed, chargeHandler(schema, account, 100))).toEqual({ kind: 'mismatch' });
      expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
    });

    it('a transaction that outlives leaseMs still saves its outcome: the row lock, not the lease, is the ownership', async () => {
      const { schema, store, request, books, record, account } = await fixture();
      const engine = createIdempotency({ store, leaseMs: 20 });
      const attempt = request(10);
      const slow = await engine.runInTransaction(attempt, async (context) => {
        const response = await chargeHandler(schema, account, 10)(context);
        // Wait on the database until the lease would have lapsed by its clock.
        await context.tx.query('SELECT pg_sleep(0.1)');
        return response;
      });
      expect(slow.kind).toBe('executed');
      expect((await record(attempt.key))?.state).toBe('succeeded');
      expect((await books()).charges).toBe(1);
    });

    // A lock claim writes its record only with COMMIT: there is no claim row for the handler to remove, so the case exists
    // only for the claim row (lock-claim.test.ts covers the lock claim's save guard).
    if (!lockClaim) {
      it('a record that vanished inside the transaction fails the save: lease_lost, and the business writes roll back with it', async () => {
        const { engine, request, books, record, store, schema, account } = await fixture();
        const attempt = request(10);
        const thrown = await engine
          .runInTransaction(attempt, async (context) => {
            const response = await chargeHandler(schema, account, 10)(context);
            // The handler removes its own claim: the save then has no row to update.
            await context.tx.query(`DELETE FROM ${store.table} WHERE idempotency_key = $1`, [attempt.key]);
            return response;
          })
          .catch((error: unknown) => error);
        expect(isOncelyError(thrown, 'lease_lost')).toBe(true);
        expect(await books()).toEqual({ charges: 0, amounts: [], balance: 100 });
        expect(await record(attempt.key)).toBeUndefined();
        expect((await engine.runInTransaction(attempt, chargeHandler(schema, account, 10))).kind).toBe('executed');
      });
    }

    it('a saved outcome PostgreSQL text cannot hold (U+0000) is a StorageError, and nothing commits', async () => {
      const { store, request, books, record, schema, account } = await fixture();
      const attempt = request(10);
      const scope = { tenant: attempt.tenant, principal: attempt.principal, operation: attempt.operation, key: attempt.key };
      // Core refuses such a resource id before the store sees it; the store refuses it too, as a typed error.
      const thrown = await store
        .transaction({ scope, fingerprint: 'f', token: 't1', leaseMs: 60_000, retentionMs: 60_000 }, async (claim, tx) => {
          expect(claim.kind).toBe('claimed');
          await charge(tx, schema, account, 10);
          return { action: 'commit', state: 'succeeded', response: { status: 201, resourceId: 'pay\u0000' }, retentionMs: 60_000, value: 'saved' };
        })
        .catch((error: unknown) => error);
      expect(thrown).toMatchObject({ code: 'storage_error', operation: 'save' });
      expect(await books()).toEqual({ charges: 0, amounts: [], balance: 100 });
      expect(await record(attempt.key)).toBeUndefined();
    });

    it('the transaction handle refuses SQL once the transaction has ended', async () => {
      const { engine, request } = await fixture();
      let kept: PostgresTx | undefined;
      await engine.runInTransaction(request(1), async ({ tx }) => {
        kept = tx;
        return { status: 200 };
      });
      const error = await kept!.query('SELECT 1').catch((caught: unknown) => caught);
      expect(isOncelyError(error, 'invalid_state')).toBe(true);
    });

    it('concurrent duplicates execute once and every caller gets the same response', async () => {
      const { engine, request, books, schema, account } = await fixture();
      const attempt = request(10);
      const results = await Promise.all(
        Array.from({ length: 20 }, () => engine.runInTransaction(attempt, chargeHandler(schema, account, 10))),
      );
      expect(results.filter((result) => result.kind === 'executed')).toHaveLength(1);
      const responses = results.map((result) => (result.kind === 'executed' || result.kind === 'replayed' ? result.response : result));
      for (const response of responses) expect(response).toEqual(responses[0]);
      expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
    });
  });
}
