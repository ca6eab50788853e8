import type { AttemptEffect, RetryReason } from './classify.js';

/** Why `retry` stopped: an answer, or one of the limits. */
export type StopReason = 'answer' | 'attempts' | 'deadline' | 'budget' | 'breaker' | 'aborted';

/** The states of a circuit breaker. */
export type BreakerState = 'closed' | 'open' | 'half_open';

/** Everything `retry` and `circuitBreaker` report. `at` is the policy clock's time. Keys never appear. */
export type RetryEvent =
  | { readonly type: 'attempt'; readonly at: number; readonly attempt: number; readonly remainingMs: number }
  | {
      readonly type: 'attempt_result';
      readonly at: number;
      readonly attempt: number;
      readonly verdict: 'success' | 'failure' | 'retry' | 'aborted';
      readonly reason?: RetryReason;
      readonly effect?: AttemptEffect;
      readonly durationMs: number;
    }
  | {
      readonly type: 'sleep';
      readonly at: number;
      /** The attempt that just failed. */
      readonly attempt: number;
      readonly delayMs: number;
      readonly reason: RetryReason;
      /** Set when the server's `Retry-After` set the delay. */
      readonly retryAfterMs?: number;
    }
  | { readonly type: 'budget_refused'; readonly at: number; readonly attempt: number; readonly balance: number }
  | { readonly type: 'breaker_rejected'; readonly at: number; readonly attempt: number; readonly state: BreakerState }
  | { readonly type: 'breaker_transition'; readonly at: number; readonly from: BreakerState; readonly to: BreakerState }
  | {
      readonly type: 'outcome';
      readonly at: number;
      readonly outcome: 'succeeded' | 'failed' | 'unknown';
      readonly attempts: number;
      readonly stoppedBy: StopReason;
      readonly durationMs: number;
    };
