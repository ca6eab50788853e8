import type { IdempotencyStore } from '@oncely/core';
import { uniqueKey } from '../runner.js';
import { scopeOf } from './harness.js';

/** Lets `parties` callers go in one tick, once the last of them has arrived. */
export function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return () => {
    arrived += 1;
    if (arrived >= parties) open();
    return opened;
  };
}

/**
 * Opens what the store opens lazily (pool connections, scripts, prepared statements) before a race:
 * on a cold pool, opening connections staggers the attempts so they never overlap.
 */
export async function warmUp(store: IdempotencyStore, width: number): Promise<void> {
  for (let pass = 0; pass < 2; pass++) {
    await Promise.all(Array.from({ length: width }, () => store.get(scopeOf(uniqueKey('warm-up')))));
  }
}

/** A store whose claims wait at one barrier for `parties` claims, and that says when all have answered. */
export interface GatedStore<S extends IdempotencyStore> {
  readonly store: S;
  /** Resolves once `parties` claims have answered. */
  readonly answered: Promise<void>;
  /** How many `transaction` calls have begun (transactional stores). */
  readonly transactionsBegun: () => number;
}

/** Wraps `store` (every other member reaches the original) so `parties` claims start in one tick. */
export function gatedStore<S extends IdempotencyStore>(store: S, parties: number): GatedStore<S> {
  const arrive = barrier(parties);
  let answers = 0;
  let begun = 0;
  let allAnswered!: () => void;
  const answered = new Promise<void>((resolve) => (allAnswered = resolve));
  const counted = <T>(result: Promise<T>) =>
    result.finally(() => {
      answers += 1;
      if (answers >= parties) allAnswered();
    });
  const transaction = (store as { transaction?: (...args: unknown[]) => Promise<unknown> }).transaction;
  const gated = Object.create(store, {
    claim: { value: (input: Parameters<S['claim']>[0]) => counted(arrive().then(() => store.claim(input))) },
    ...(transaction && {
      transaction: {
        value: (...args: unknown[]) => {
          begun += 1;
          return arrive().then(() => transaction.apply(store, args));
        },
      },
    }),
  }) as S;
  return { store: gated, answered, transactionsBegun: () => begun };
}
