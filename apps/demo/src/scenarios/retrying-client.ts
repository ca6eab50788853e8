import {
  type Classifier,
  classifyError,
  classifyStatus,
  type RetryOutcome,
  type RetryPolicyOptions,
  retry,
} from '@oncely/core/retry';
import { type ApiRequest, type Exchange, exchange } from './api-client.js';

/** Thrown for an attempt that got no answer, so core's classifier sees the socket error's code. */
class NoAnswer extends Error {
  readonly code: string | undefined;
  constructor(readonly exchange: Extract<Exchange, { kind: 'no_answer' }>) {
    super(exchange.error.message, { cause: exchange.error });
    this.code = exchange.error.code;
  }
}

/** Answers are classified by status (honouring Retry-After); lost connections by their error code. */
const classify: Classifier<Exchange> = (result, { now }) => {
  if (result.kind === 'threw') return classifyError(result.error, now);
  const answered = result.value as Extract<Exchange, { kind: 'answered' }>;
  return classifyStatus(answered.status, answered.headers['retry-after'], now);
};

/** A logical request retried with one idempotency key, and every attempt it took. */
export interface RetriedRequest {
  readonly outcome: RetryOutcome<Exchange>;
  readonly attempts: readonly Exchange[];
}

/** The scenarios' default: a few attempts with full jitter, enough to ride out a restart. */
const SCENARIO_RETRY: RetryPolicyOptions<Exchange> = {
  maxAttempts: 8,
  baseMs: 100,
  capMs: 2_000,
  deadlineMs: 45_000,
  attemptTimeoutMs: 15_000,
};

/**
 * Sends `request` under core's `retry`: the same key on every attempt, full-jitter backoff, a
 * deadline, and the default classification (connection resets and 409/503 retried, 4xx final).
 */
export async function retryRequest(
  baseUrl: string,
  request: ApiRequest,
  policy: RetryPolicyOptions<Exchange> = SCENARIO_RETRY,
): Promise<RetriedRequest> {
  const attempts: Exchange[] = [];
  const outcome = await retry<Exchange>(
    async ({ signal }) => {
      const result = await exchange(baseUrl, { ...request, signal });
      attempts.push(result);
      if (result.kind === 'no_answer') throw new NoAnswer(result);
      return result;
    },
    { ...policy, classify },
    { key: request.key },
  );
  return { outcome, attempts };
}
