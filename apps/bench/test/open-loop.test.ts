import { describe, expect, it } from 'vitest';
import { simulateOpenLoop } from '../src/jitter/open-loop.js';
import type { QuotaName } from '../src/jitter/retry-quotas.js';

const run = (quota: QuotaName, failureProbability: number, seed = 3) =>
  simulateOpenLoop({ quota, failureProbability, ratePerSec: 100, durationSec: 60, warmupSec: 20, seed });

describe('the open-loop retry-budget scenario', () => {
  it('a healthy dependency sees exactly one attempt per request under every policy', () => {
    for (const quota of ['no budget', 'AWS SDK v3 retry quota', 'oncely retryBudget'] as const) {
      expect(run(quota, 0)).toMatchObject({ attemptsPerRequest: 1, successRate: 1 });
    }
  });

  it('without a budget a dead dependency takes every attempt of the policy: 3 per request', () => {
    expect(run('no budget', 1).attemptsPerRequest).toBe(3);
  });

  it('the AWS quota drains and stops retrying; oncely keeps retries near 10 % plus 1 per second', () => {
    expect(run('AWS SDK v3 retry quota', 1).attemptsPerRequest).toBe(1);
    const oncely = run('oncely retryBudget', 1).attemptsPerRequest;
    // 10 % of 100 requests/s plus 1 retry/s: at most 0.11 retries per request, and close to it.
    expect(oncely).toBeLessThanOrEqual(1.111);
    expect(oncely).toBeGreaterThan(1.09);
  });

  it('is deterministic for a seed', () => {
    expect(run('oncely retryBudget', 0.5, 9)).toEqual(run('oncely retryBudget', 0.5, 9));
  });
});
