import { createIdempotency, type IdempotencyStore, type RunResult, stripeReplayPolicy } from '@oncely/core';
import { uniqueKey, type TestRunner } from '../runner.js';
import { LONG, storeHarness } from './harness.js';
import type { StoreConformanceOptions } from './options.js';
import { gatedStore, warmUp } from './race.js';

/**
 * Group `engine`: the store behind `createIdempotency`: concurrent attempts execute once and the rest
 * replay, a handler error releases the key, a different request never executes nor sees the other
 * response, and both replay policies.
 */
export function storeEngineTests<S extends IdempotencyStore>(runner: TestRunner, options: StoreConformanceOptions<S>): void {
  const { test, must, raceSize, raceRounds, timeout } = storeHarness(runner, options);

  runner.describe(`${options.name}: through the engine`, () => {
    test(
      ['store.engine.once'],
      `${raceSize} concurrent attempts with one key, their claims started together, execute the handler exactly once (${raceRounds} rounds)`,
      async (store) => {
        await warmUp(store, raceSize);
        for (let round = 1; round <= raceRounds; round++) {
          const gated = gatedStore(store, raceSize);
          const engine = createIdempotency({ store: gated.store, leaseMs: LONG });
          const request = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: uniqueKey('race'), request: { amount: '10.00' } };
          let executions = 0;
          const results = await Promise.all(
            Array.from({ length: raceSize }, () =>
              engine.run(request, async () => {
                executions += 1;
                // Holds the outcome back until every claim has answered, so none of them can replay it.
                await gated.answered;
                return { status: 201, body: { id: 'pay_race' } };
              }),
            ),
          );
          must('store.engine.once', `${executions} of ${raceSize} concurrent attempts executed the handler (round ${round})`, executions).toBe(1);
          const kinds = (kind: RunResult['kind']) => results.filter((result) => result.kind === kind).length;
          must('store.engine.once', `${kinds('executed')} attempts answered executed (round ${round})`, kinds('executed')).toBe(1);
          must('store.engine.once', `${kinds('mismatch')} attempts of one request answered mismatch (round ${round})`, kinds('mismatch')).toBe(0);
          const late = await Promise.all(
            Array.from({ length: 10 }, () =>
              createIdempotency({ store, leaseMs: LONG }).run(request, async () => {
                executions += 1;
                return { status: 201, body: { id: 'pay_other' } };
              }),
            ),
          );
          must('store.engine.once', `a later attempt executed again (round ${round})`, executions).toBe(1);
          for (const result of late) {
            must('store.engine.once', `a later attempt did not replay the outcome (round ${round})`, result).toEqual({
              kind: 'replayed',
              state: 'succeeded',
              response: { status: 201, body: { id: 'pay_race' } },
            });
          }
        }
      },
      timeout * 2,
    );

    test(['store.engine.error-releases'], 'a handler error releases the key and the retry executes', async (store) => {
      const engine = createIdempotency({ store, leaseMs: LONG });
      const request = { tenant: 'acme', operation: 'orders.create.v1', key: uniqueKey('error'), request: { sku: 'book-1' } };
      let executions = 0;
      const failure = await engine
        .run(request, async () => {
          executions += 1;
          throw new Error('payment gateway down');
        })
        .catch((error: unknown) => error);
      must('store.engine.error-releases', "the handler's error did not reach the caller unchanged", (failure as Error | undefined)?.message).toBe('payment gateway down');
      must('store.engine.error-releases', 'the key is still held after the handler failed', await engine.get(request)).toBeUndefined();
      const retry = await engine.run(request, async () => {
        executions += 1;
        return { status: 201, body: { id: 'ord_1' } };
      });
      must('store.engine.error-releases', 'the retry after a handler error did not execute', [retry.kind, executions]).toEqual(['executed', 2]);
    });

    test(['store.engine.mismatch'], "a different request with the key never executes and never receives the other request's response", async (store) => {
      const engine = createIdempotency({ store, leaseMs: LONG });
      const key = uniqueKey('mismatch');
      const first = await engine.run({ tenant: 'acme', operation: 'payments.create.v1', key, request: { amount: '10.00' } }, async () => ({
        status: 201,
        body: { id: 'pay_10', secret: 'only-for-the-first-request' },
      }));
      must('store.engine.mismatch', 'the first request did not execute', first.kind).toBe('executed');
      let executed = false;
      const second = await engine.run({ tenant: 'acme', operation: 'payments.create.v1', key, request: { amount: '100.00' } }, async () => {
        executed = true;
        return { status: 201 };
      });
      must('store.engine.mismatch', 'a different request with the same key was not answered mismatch', second).toEqual({ kind: 'mismatch' });
      must('store.engine.mismatch', 'a different request with the same key executed', executed).toBe(false);
    });

    test(['store.engine.policies'], 'the Stripe policy stores a 500 and replays it; the default policy releases it', async (store) => {
      const stripe = createIdempotency({ store, leaseMs: LONG, replay: stripeReplayPolicy });
      const standard = createIdempotency({ store, leaseMs: LONG });
      const fail = async () => ({ status: 500, body: { error: 'boom' } });
      const stripeKey = { tenant: 'acme', operation: 'charges.create.v1', key: uniqueKey('stripe'), request: {} };
      await stripe.run(stripeKey, fail);
      must('store.engine.policies', 'the Stripe policy did not replay a stored 500', (await stripe.run(stripeKey, fail)).kind).toBe('replayed');
      const standardKey = { ...stripeKey, key: uniqueKey('default') };
      await standard.run(standardKey, fail);
      must('store.engine.policies', 'the default policy kept a 500', await standard.get(standardKey)).toBeUndefined();
      must('store.engine.policies', 'the retry of a released 500 did not execute', (await standard.run(standardKey, fail)).kind).toBe('executed');
    });
  });
}
