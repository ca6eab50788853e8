import { type Clock, systemClock } from '../clock.js';
import { integerOption, numberOption } from '../options/option-checks.js';
import { slidingWindow } from './sliding-window.js';

/** Options of {@link retryBudget}. */
export interface RetryBudgetOptions {
  /** Retries allowed per logical request, over the window (default 0.1: 10 %). */
  readonly ratio?: number;
  /** Retries always allowed per second of window, so quiet callers can retry at all (default 1). */
  readonly minRetriesPerSec?: number;
  /** How long a deposit counts, in ms (default 10 000, as Finagle's ttl). */
  readonly windowMs?: number;
  readonly clock?: Clock;
}

/** The answer to a withdrawal. */
export type BudgetDecision = 'granted' | 'refused';

/**
 * A retry budget shared across calls: a token bucket whose deposits expire. Each logical request
 * deposits `ratio` tokens, each retry withdraws one; a reserve of `minRetriesPerSec × window` is always
 * there. Invariant: for every granted retry at time t, retries in (t − window, t] never exceed
 * `ratio × requests + minRetriesPerSec × windowMs / 1000` over that same window.
 */
export interface RetryBudget {
  /** Counts one logical request (a first attempt). */
  deposit(): void;
  /** Takes one retry from the budget if its balance allows. */
  withdraw(): BudgetDecision;
  /** Retries the budget would grant now. */
  readonly balance: number;
}

/** Creates a {@link RetryBudget}; options are validated here, with messages naming the field. */
export function retryBudget(options: RetryBudgetOptions = {}): RetryBudget {
  const ratio = options.ratio ?? 0.1;
  const minRetriesPerSec = options.minRetriesPerSec ?? 1;
  const windowMs = options.windowMs ?? 10_000;
  const clock = options.clock ?? systemClock;
  numberOption('oncely: retryBudget ratio', ratio);
  numberOption('oncely: retryBudget minRetriesPerSec', minRetriesPerSec);
  integerOption('oncely: retryBudget windowMs', windowMs);
  const reserve = (minRetriesPerSec * windowMs) / 1_000;
  const window = slidingWindow(windowMs, ['requests', 'retries'] as const);
  const balanceAt = (now: number) => {
    const { requests, retries } = window.totals(now);
    return ratio * requests + reserve - retries;
  };

  return {
    deposit() {
      window.add(clock.now(), 'requests');
    },
    withdraw() {
      const now = clock.now();
      if (balanceAt(now) < 1) return 'refused';
      window.add(now, 'retries');
      return 'granted';
    },
    get balance() {
      return Math.max(0, Math.floor(balanceAt(clock.now())));
    },
  };
}
