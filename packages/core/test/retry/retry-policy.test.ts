import { describe, expect, it } from 'vitest';
import { isOncelyError } from '../../src/index.js';
import { retry, retryPolicy } from '../../src/retry.js';

function rejection(create: () => unknown): Error {
  try {
    create();
  } catch (error) {
    expect(isOncelyError(error, 'invalid_option')).toBe(true);
    return error as Error;
  }
  throw new Error('expected the policy to be rejected');
}

describe('retryPolicy validation', () => {
  it.each([
    ['maxAttempts', { maxAttempts: 0 }],
    ['maxAttempts', { maxAttempts: 2.5 }],
    ['baseMs', { baseMs: -1 }],
    ['capMs', { capMs: -5 }],
    ['capMs', { baseMs: 500, capMs: 100 }],
    ['deadlineMs', { deadlineMs: 0 }],
    ['deadlineMs', { deadlineMs: -100 }],
    ['attemptTimeoutMs', { attemptTimeoutMs: -1 }],
    ['deadlineMs', { deadlineMs: 1_000, attemptTimeoutMs: 2_000 }],
    ['classify', { classify: 'yes' }],
    ['random', { random: 0.5 }],
    ['budget', { budget: {} }],
    ['breaker', { breaker: {} }],
    ['clock', { clock: { now: () => 0 } }],
  ])('rejects a bad %s when the policy is created, naming the field', (field, options) => {
    const error = rejection(() => retryPolicy(options as never));
    expect(error.message).toContain(`retry policy ${field}`);
  });

  it('says why a deadline shorter than one attempt is refused', () => {
    expect(rejection(() => retryPolicy({ deadlineMs: 500, attemptTimeoutMs: 1_000 })).message).toBe(
      'oncely: retry policy deadlineMs must be at least one attempt (attemptTimeoutMs 1000), got 500',
    );
  });

  it('uses the documented defaults: 3 attempts, base 100 ms, cap 20 s, deadline 30 s split across attempts', () => {
    const policy = retryPolicy();
    expect([policy.maxAttempts, policy.baseMs, policy.capMs, policy.deadlineMs, policy.attemptTimeoutMs]).toEqual([
      3, 100, 20_000, 30_000, 10_000,
    ]);
    expect(retryPolicy({ deadlineMs: Number.POSITIVE_INFINITY }).attemptTimeoutMs).toBe(10_000);
    expect(retryPolicy({ deadlineMs: 9_000, maxAttempts: 2 }).attemptTimeoutMs).toBe(4_500);
  });

  it('is frozen, and retry validates raw options before calling fn', async () => {
    const policy = retryPolicy({ maxAttempts: 2 });
    expect(Object.isFrozen(policy)).toBe(true);
    expect(retryPolicy(policy)).toBe(policy);
    let calls = 0;
    await expect(
      retry(async () => {
        calls += 1;
      }, { maxAttempts: 0 }),
    ).rejects.toThrow(/maxAttempts/);
    expect(calls).toBe(0);
  });
});
