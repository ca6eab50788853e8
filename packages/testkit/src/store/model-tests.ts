import type { IdempotencyStore } from '@oncely/core';
import fc from 'fast-check';
import { uniqueKey, type TestRunner } from '../runner.js';
import { type ModelReal, modelCommands } from '../store-model.js';
import { claimInput, completeInput, storeHarness, scopeOf } from './harness.js';
import type { StoreConformanceOptions } from './options.js';

/**
 * Group `model`: a fast-check `fc.commands` model of the state machine run with
 * `fc.scheduledModelRun`, and concurrent attempts in every `fc.scheduler` interleaving.
 */
export function storeModelTests<S extends IdempotencyStore>(runner: TestRunner, options: StoreConformanceOptions<S>): void {
  const { test, must, numRuns, timeout } = storeHarness(runner, options);

  runner.describe(`${options.name}: state machine (fast-check model)`, () => {
    test(
      ['store.model.sequences'],
      'every sequence of claims, completes, releases, extends and gets matches the model',
      async (store) => {
        await fc.assert(
          fc.asyncProperty(fc.scheduler(), fc.commands(modelCommands(), { maxCommands: 25 }), async (scheduler, commands) => {
            const real: ModelReal = { store, scope: scopeOf(uniqueKey('model')), expect: runner.expect };
            await fc.scheduledModelRun(scheduler, () => ({ model: { record: undefined, tokens: [] }, real }), commands);
          }),
          { numRuns },
        );
      },
      timeout * 2,
    );

    test(
      ['store.model.interleavings'],
      'concurrent attempts in any interleaving never hold the key together, and a completed outcome is final',
      async (store) => {
        const clause = 'store.model.interleavings';
        await fc.assert(
          fc.asyncProperty(
            fc.scheduler(),
            fc.array(fc.constantFrom<'complete' | 'release'>('complete', 'release'), { minLength: 2, maxLength: 6 }),
            async (scheduler, plans) => {
              const scope = scopeOf(uniqueKey('interleave'));
              let holders = 0;
              let maxHolders = 0;
              const completedBy: number[] = [];
              const attempts = plans.map(async (plan, index) => {
                await scheduler.schedule(Promise.resolve(), `start ${index}`);
                const completedBefore = completedBy.length > 0;
                const claim = await store.claim(claimInput(scope, `token-${index}`));
                if (claim.kind !== 'claimed') {
                  if (completedBefore) must(clause, 'a claim after a complete did not see the outcome', claim.record.state).toBe('succeeded');
                  return;
                }
                must(clause, 'a key was claimed again after its outcome was stored', completedBefore).toBe(false);
                holders += 1;
                maxHolders = Math.max(maxHolders, holders);
                await scheduler.schedule(Promise.resolve(), `${plan} ${index}`);
                holders -= 1;
                if (plan === 'complete') {
                  const response = { status: 200, body: index };
                  must(clause, "the holder's complete was refused", await store.complete(completeInput(scope, `token-${index}`, { response }))).toBe('ok');
                  completedBy.push(index);
                } else {
                  must(clause, "the holder's release was refused", await store.release({ scope, token: `token-${index}` })).toBe('ok');
                }
              });
              await scheduler.waitFor(Promise.all(attempts));
              must(clause, `${maxHolders} attempts held the key at once`, maxHolders).toBeLessThanOrEqual(1);
              must(clause, `${completedBy.length} attempts stored an outcome`, completedBy.length).toBeLessThanOrEqual(1);
              const record = await store.get(scope);
              if (completedBy.length === 1) must(clause, 'the stored outcome is not the completed one', record?.response?.body).toBe(completedBy[0]);
              else must(clause, 'a record remains though every holder released', record).toBeUndefined();
            },
          ),
          { numRuns },
        );
      },
      timeout * 2,
    );
  });
}
