import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isOncelyError, manualClock } from '../../src/index.js';
import { retryBudget } from '../../src/retry.js';

/** Time gaps between events, each a request (deposit) or a retry (withdrawal). */
const steps = fc.array(
  fc.record({ gapMs: fc.integer({ min: 0, max: 3_000 }), kind: fc.constantFrom<'request' | 'retry'>('request', 'request', 'retry') }),
  { maxLength: 300 },
);

describe('retryBudget', () => {
  it('never grants more retries than ratio x requests + floor over the window ending at any granted retry', () => {
    fc.assert(
      fc.property(
        steps,
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 1, max: 20 }),
        (plan, percent, minRetriesPerSec, windowSeconds) => {
          let now = 1_000_000;
          // The budget only reads the clock, so a clock that reports `now` is all it needs.
          const clock = { now: () => now, sleep: async () => undefined };
          const windowMs = windowSeconds * 1_000;
          const ratio = percent / 100;
          const budget = retryBudget({ ratio, minRetriesPerSec, windowMs, clock });
          const log: { at: number; kind: 'request' | 'retry' }[] = [];
          for (const step of plan) {
            now += step.gapMs;
            if (step.kind === 'request') {
              budget.deposit();
              log.push({ at: now, kind: 'request' });
            } else if (budget.withdraw() === 'granted') {
              log.push({ at: now, kind: 'retry' });
              const inWindow = log.filter((event) => event.at > now - windowMs);
              const requests = inWindow.filter((event) => event.kind === 'request').length;
              const retries = inWindow.length - requests;
              // Integer arithmetic: retries * 100 <= percent * requests + floor * 100.
              expect(retries * 100).toBeLessThanOrEqual(percent * requests + minRetriesPerSec * windowSeconds * 100);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('grants exactly the share: 100 requests at 10 % and no floor allow 10 retries, then refuse', () => {
    const clock = manualClock(0);
    const budget = retryBudget({ ratio: 0.1, minRetriesPerSec: 0, clock });
    for (let index = 0; index < 100; index++) budget.deposit();
    expect(budget.balance).toBe(10);
    const decisions = Array.from({ length: 12 }, () => budget.withdraw());
    expect(decisions.filter((decision) => decision === 'granted').length).toBe(10);
    expect(decisions.slice(10)).toEqual(['refused', 'refused']);
  });

  it('deposits expire with the window, so a burst of old traffic cannot pay for retries later', async () => {
    const clock = manualClock(0);
    const budget = retryBudget({ ratio: 0.5, minRetriesPerSec: 0, windowMs: 10_000, clock });
    for (let index = 0; index < 10; index++) budget.deposit();
    expect(budget.balance).toBe(5);
    await clock.advance(10_000);
    expect(budget.balance).toBe(0);
    expect(budget.withdraw()).toBe('refused');
  });

  it('the floor lets a quiet caller retry: 1 per second over a 10 s window is 10 retries with no traffic', () => {
    const budget = retryBudget({ clock: manualClock(0) });
    expect(budget.balance).toBe(10);
    expect(Array.from({ length: 11 }, () => budget.withdraw()).filter((decision) => decision === 'granted').length).toBe(10);
  });

  it('rejects invalid options, naming the field', () => {
    const cases: [object, string][] = [
      [{ ratio: -0.1 }, 'ratio'],
      [{ ratio: Number.NaN }, 'ratio'],
      [{ minRetriesPerSec: -1 }, 'minRetriesPerSec'],
      [{ windowMs: 0 }, 'windowMs'],
      [{ windowMs: 1.5 }, 'windowMs'],
    ];
    for (const [options, field] of cases) {
      let caught: unknown;
      try {
        retryBudget(options);
      } catch (error) {
        caught = error;
      }
      expect(isOncelyError(caught, 'invalid_option')).toBe(true);
      expect((caught as Error).message).toContain(field);
    }
  });
});
