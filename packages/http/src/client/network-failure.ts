import type { Classification, RetryPolicy } from '@oncely/core/retry';
import { retryPolicy } from '@oncely/core/retry';

/** How a network failure of `fetch` is retried: the request may have reached the server. */
const NETWORK_FAILURE: Classification = { verdict: 'retry', reason: 'network_error', effect: 'maybe_applied' };

/**
 * The Fetch standard rejects every network failure with a bare `TypeError`, and browsers attach no
 * code to it (Node's undici does, and core's classifier reads those codes). Such a failure may come
 * after the request was sent, so where the policy's classifier would call it a definitive failure of
 * the dependency, it is retried as maybe applied: running out of time after it is `unknown`, never
 * `failed`. Only errors passed to `mark` (thrown by `fetch` itself) are treated so.
 */
export function withNetworkFailures<T>(policy: RetryPolicy<T>): { readonly policy: RetryPolicy<T>; mark(error: unknown): void } {
  const failures = new WeakSet<object>();
  return {
    // The spread keeps the policy's brand (and its budget and breaker): its fields were validated.
    policy: retryPolicy<T>({
      ...policy,
      classify: (result, context) => {
        const verdict = policy.classify(result, context);
        const network = result.kind === 'threw' && typeof result.error === 'object' && result.error !== null && failures.has(result.error);
        return network && verdict.verdict === 'failure' && verdict.blame === 'dependency' ? NETWORK_FAILURE : verdict;
      },
    }),
    mark(error) {
      if (error instanceof TypeError) failures.add(error);
    },
  };
}
