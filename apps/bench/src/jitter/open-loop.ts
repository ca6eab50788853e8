import { fullJitter, retryPolicy } from '@oncely/core/retry';
import { eventQueue } from './event-queue.js';
import { type QuotaName, retryQuota } from './retry-quotas.js';
import { seededRandom } from './seeded-random.js';

/** Options of {@link simulateOpenLoop}. */
export interface OpenLoopOptions {
  readonly quota: QuotaName;
  /** Probability that one attempt fails. */
  readonly failureProbability: number;
  /** Logical requests per second (Poisson arrivals). */
  readonly ratePerSec: number;
  /** Simulated seconds measured, after `warmupSec` that fill the budgets' windows. */
  readonly durationSec: number;
  readonly warmupSec: number;
  readonly seed: number;
}

/** Load and outcome for requests that arrived in the measured window. */
export interface OpenLoopResult {
  readonly requests: number;
  /** Attempts per logical request: 1 means no retry ever reached the dependency. */
  readonly attemptsPerRequest: number;
  /** Share of logical requests that eventually succeeded. */
  readonly successRate: number;
}

interface Request {
  readonly measured: boolean;
  attempts: number;
}

/**
 * Open loop: requests keep arriving whatever happens to earlier ones, and each attempt fails
 * independently with probability p. Retries follow oncely's default policy (3 attempts in total,
 * full jitter from 100 ms) and ask the quota before each retry.
 */
export function simulateOpenLoop(options: OpenLoopOptions): OpenLoopResult {
  const random = seededRandom(options.seed);
  const policy = retryPolicy({});
  const queue = eventQueue<Request | 'arrival'>();
  let now = 0;
  const quota = retryQuota(options.quota, () => now);
  const start = options.warmupSec * 1_000;
  const end = start + options.durationSec * 1_000;
  let requests = 0;
  let attempts = 0;
  let succeeded = 0;
  queue.push(0, 'arrival');
  for (let next = queue.pop(); next; next = queue.pop()) {
    now = next.time;
    if (next.event === 'arrival') {
      if (now >= end) continue;
      const request: Request = { measured: now >= start, attempts: 0 };
      if (request.measured) requests++;
      quota.onRequest();
      queue.push(now, request);
      // Exponential inter-arrival times make arrivals Poisson.
      queue.push(now - Math.log(1 - random.next()) * (1_000 / options.ratePerSec), 'arrival');
      continue;
    }
    const request = next.event;
    request.attempts++;
    if (request.measured) attempts++;
    if (random.next() >= options.failureProbability) {
      if (request.measured) succeeded++;
      quota.onSuccess(request.attempts > 1);
    } else if (request.attempts < policy.maxAttempts && quota.allowRetry()) {
      queue.push(now + fullJitter(request.attempts - 1, policy, random.next), request);
    }
  }
  return { requests, attemptsPerRequest: attempts / requests, successRate: succeeded / requests };
}
