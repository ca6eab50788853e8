import type { StopReason } from './events.js';

/**
 * The result of `retry`. `unknown` is a real result, not an error: the limits ran out (deadline,
 * attempts, budget, breaker, cancellation) after an attempt that may have been applied. Keep the key
 * and reconcile; never start the operation again under a new key.
 */
export type RetryOutcome<T> =
  | { readonly outcome: 'succeeded'; readonly value: T; readonly attempts: number }
  | {
      readonly outcome: 'failed';
      /** What was thrown, or the returned value the classifier rejected (a `Response`, say). */
      readonly error: unknown;
      readonly attempts: number;
      /** `answer`: a definitive failure. Otherwise a limit stopped attempts that were all refused. */
      readonly stoppedBy: StopReason;
    }
  | {
      readonly outcome: 'unknown';
      /** The idempotency key to retry or look up with later (undefined if the call had none). */
      readonly key: string | undefined;
      readonly lastError: unknown;
      readonly attempts: number;
      readonly stoppedBy: Exclude<StopReason, 'answer'>;
    };
