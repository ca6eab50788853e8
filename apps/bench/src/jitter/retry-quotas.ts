import type { Clock } from '@oncely/core';
import { retryBudget } from '@oncely/core/retry';

/** Decides whether a failed attempt may be retried, and hears how requests end. */
export interface RetryQuota {
  /** A logical request starts (its first attempt). */
  onRequest(): void;
  /** May this request retry now? */
  allowRetry(): boolean;
  /** The request succeeded; `retried` tells whether it needed a retry. */
  onSuccess(retried: boolean): void;
}

/** The three policies compared. */
export const QUOTAS = ['no budget', 'AWS SDK v3 retry quota', 'oncely retryBudget'] as const;

/** One policy's name. */
export type QuotaName = (typeof QUOTAS)[number];

/** AWS SDK v3 standard mode: 500 tokens, a retry costs 5, a success refunds its retry's cost or earns 1. */
const AWS = { initial: 500, retryCost: 5, noRetryIncrement: 1 } as const;

/** Creates a fresh quota; `now` is the simulation's clock. */
export function retryQuota(name: QuotaName, now: () => number): RetryQuota {
  switch (name) {
    case 'no budget':
      return { onRequest: () => undefined, allowRetry: () => true, onSuccess: () => undefined };
    case 'AWS SDK v3 retry quota': {
      let capacity: number = AWS.initial;
      return {
        onRequest: () => undefined,
        allowRetry() {
          if (capacity < AWS.retryCost) return false;
          capacity -= AWS.retryCost;
          return true;
        },
        onSuccess(retried) {
          capacity = Math.min(AWS.initial, capacity + (retried ? AWS.retryCost : AWS.noRetryIncrement));
        },
      };
    }
    case 'oncely retryBudget': {
      // The budget reads only `now()`; the simulation never sleeps.
      const clock: Clock = { now, sleep: () => Promise.reject(new Error('bench: the simulated clock never sleeps')) };
      const budget = retryBudget({ clock });
      return {
        onRequest: () => budget.deposit(),
        allowRetry: () => budget.withdraw() === 'granted',
        onSuccess: () => undefined,
      };
    }
  }
}
