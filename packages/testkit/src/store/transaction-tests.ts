import { createIdempotency, type IdempotencyStore } from '@oncely/core';
import { isTransactionalStore } from '@oncely/core/adapter';
import { sleep, uniqueKey, type TestRunner } from '../runner.js';
import { LONG, scopeOf, storeHarness } from './harness.js';
import type { StoreConformanceOptions } from './options.js';
import { gatedStore, warmUp } from './race.js';

/**
 * Group `transactions`, for stores that declare them: concurrent `runInTransaction` attempts execute
 * once and the rest replay the committed result; an error or a released outcome rolls the claim back;
 * a different request never executes. Every store proves its declared capability matches its methods.
 */
export function storeTransactionTests<S extends IdempotencyStore>(runner: TestRunner, options: StoreConformanceOptions<S>): void {
  const { test, must, raw, raceSize, raceRounds, timeout } = storeHarness(runner, options);
  const request = (key: string, amount = '10.00') => ({ tenant: 'acme', operation: 'payments.create.v1', key, request: { amount } });

  /** A test of transactional mode; a store that does not declare it passes it without running it. */
  const transactional = (clauses: readonly string[], title: string, body: (store: S) => Promise<void>, ms?: number) =>
    test(
      clauses,
      title,
      async (store) => {
        if (store.capabilities.transactions) await body(store);
      },
      ms,
    );

  runner.describe(`${options.name}: transactions`, () => {
    test(['tx.capability'], 'the declared transactions capability matches the transaction method', async (store) => {
      must('tx.capability', 'the declared transactions capability does not match the transaction method', isTransactionalStore(store)).toBe(store.capabilities.transactions);
    });

    const size = Math.min(raceSize, 20);
    transactional(
      ['tx.once'],
      `${size} concurrent transactional attempts, started together, execute once; the others replay the committed result (${raceRounds} rounds)`,
      async (store) => {
        await warmUp(store, size);
        for (let round = 1; round <= raceRounds; round++) {
          const gated = gatedStore(store, size);
          const engine = createIdempotency({ store: gated.store, leaseMs: LONG });
          const key = uniqueKey('tx-race');
          let executions = 0;
          const results = await Promise.all(
            Array.from({ length: size }, () =>
              engine.runInTransaction(request(key), async () => {
                executions += 1;
                // The duplicates are blocked on the key by now, or would have executed too.
                await sleep(5);
                return { status: 201, body: { id: 'pay_tx' } };
              }),
            ),
          );
          must('tx.once', `${executions} of ${size} concurrent transactional attempts executed (round ${round})`, executions).toBe(1);
          must('tx.once', `${results.filter((r) => r.kind === 'executed').length} attempts answered executed (round ${round})`, results.filter((r) => r.kind === 'executed').length).toBe(1);
          for (const result of results) {
            if (result.kind !== 'executed') {
              must('tx.once', `a duplicate did not replay the committed result (round ${round})`, result).toEqual({
                kind: 'replayed',
                state: 'succeeded',
                response: { status: 201, body: { id: 'pay_tx' } },
              });
            }
          }
        }
      },
      timeout * 2,
    );

    transactional(['tx.rollback.error'], 'a handler error rolls the claim back: no record, the error unchanged, and the retry executes', async (store) => {
      const engine = createIdempotency({ store, leaseMs: LONG });
      const key = uniqueKey('tx-rollback');
      const failure = await engine
        .runInTransaction(request(key), async () => {
          throw new Error('crash before commit');
        })
        .catch((error: unknown) => error);
      must('tx.rollback.error', "the handler's error did not reach the caller unchanged", (failure as Error).message).toBe('crash before commit');
      must('tx.rollback.error', 'the claim of a failed transaction was kept', await engine.get(request(key))).toBeUndefined();
      if (options.inspect) must('tx.rollback.error', 'the claim of a failed transaction is still stored', await raw(store, scopeOf(key, { tenant: 'acme', principal: '' }))).toBeUndefined();
      must('tx.rollback.error', 'the retry after a rolled-back transaction did not execute', (await engine.runInTransaction(request(key), async () => ({ status: 201 }))).kind).toBe('executed');
    });

    transactional(['tx.rollback.released'], 'a released outcome (5xx) rolls back, so the retry executes', async (store) => {
      const engine = createIdempotency({ store, leaseMs: LONG });
      const key = uniqueKey('tx-release');
      must('tx.rollback.released', 'a 503 was not answered as executed and released', await engine.runInTransaction(request(key), async () => ({ status: 503 }))).toEqual({
        kind: 'executed',
        state: 'released',
        response: { status: 503 },
      });
      must('tx.rollback.released', 'a released outcome was committed', await engine.get(request(key))).toBeUndefined();
    });

    transactional(
      ['tx.join'],
      "joining the caller's transaction: the record commits with it, a handler error undoes only the store's part, the caller's rollback keeps nothing",
      async (store) => {
        if (typeof (store as { join?: unknown }).join !== 'function') return;
        const open = options.openTransaction;
        must('tx.join', 'the store has join but the suite was given no openTransaction to call it in', typeof open).toBe('function');
        if (!open) return;
        const engine = createIdempotency({ store, leaseMs: LONG });
        const kept = uniqueKey('tx-join');
        const failed = uniqueKey('tx-join-error');
        const dropped = uniqueKey('tx-join-rollback');
        await open(store, async (tx) => {
          const failure = await engine
            .runInTransaction(request(failed), async () => {
              throw new Error('handler failed in a joined transaction');
            }, { tx })
            .catch((error: unknown) => error);
          must('tx.join', "a joined handler's error did not reach the caller unchanged", (failure as Error).message).toBe('handler failed in a joined transaction');
          // The caller's transaction is still usable after the failure: a second join executes in it.
          const first = await engine.runInTransaction(request(kept), async () => ({ status: 201, body: { id: 'pay_join' } }), { tx });
          must('tx.join', 'a join after a failed one in the same transaction did not execute', first.kind).toBe('executed');
        });
        must('tx.join', 'a record joined into a committed transaction was not kept', (await engine.get(request(kept)))?.state).toBe('succeeded');
        must('tx.join', 'the record of a handler that failed in a joined transaction was kept', await engine.get(request(failed))).toBeUndefined();
        const rollback = new Error('the caller rolls back');
        const thrown = await open(store, async (tx) => {
          await engine.runInTransaction(request(dropped), async () => ({ status: 201 }), { tx });
          throw rollback;
        }).catch((error: unknown) => error);
        must('tx.join', "the caller's own error did not come back from its transaction", thrown).toBe(rollback);
        must('tx.join', 'a record joined into a transaction the caller rolled back was kept', await engine.get(request(dropped))).toBeUndefined();
        must('tx.join', 'a joined, committed record did not replay', (await engine.runInTransaction(request(kept), async () => ({ status: 500 }))).kind).toBe('replayed');
      },
    );

    transactional(['tx.mismatch'], 'a different request in a transaction never executes', async (store) => {
      const engine = createIdempotency({ store, leaseMs: LONG });
      const key = uniqueKey('tx-mismatch');
      await engine.runInTransaction(request(key), async () => ({ status: 201 }));
      let executed = false;
      const second = await engine.runInTransaction(request(key, '99.00'), async () => {
        executed = true;
        return { status: 201 };
      });
      must('tx.mismatch', 'a different request was not answered mismatch', second).toEqual({ kind: 'mismatch' });
      must('tx.mismatch', 'a different request executed', executed).toBe(false);
    });
  });
}
