import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isOncelyError } from '../../src/index.js';
import { fullJitter } from '../../src/retry.js';

const bounds = fc
  .tuple(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 1_000_000 }))
  .map(([baseMs, extra]) => ({ baseMs, capMs: baseMs + extra }));
const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe('fullJitter', () => {
  it('always lies in [0, min(cap, base*2^attempt)) and is an integer', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_100 }), bounds, unit, (attempt, options, r) => {
        const delay = fullJitter(attempt, options, () => r);
        // The mathematical ceiling: 0 · 2^attempt is 0 even where 2^attempt overflows to Infinity.
        const ceiling = options.baseMs === 0 ? 0 : Math.min(options.capMs, options.baseMs * 2 ** attempt);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        if (ceiling === 0) expect(delay).toBe(0);
        else expect(delay).toBeLessThan(ceiling);
      }),
      { numRuns: 2_000 },
    );
  });

  it('uses the injected random source, exactly once, as floor(random * ceiling)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), bounds, unit, (attempt, options, r) => {
        let calls = 0;
        const delay = fullJitter(attempt, options, () => {
          calls += 1;
          return r;
        });
        expect(calls).toBe(1);
        expect(delay).toBe(Math.floor(r * Math.min(options.capMs, options.baseMs * 2 ** attempt)));
      }),
    );
  });

  it('grows with the random draw: a larger draw never gives a shorter sleep', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), bounds, unit, unit, (attempt, options, a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        expect(fullJitter(attempt, options, () => low)).toBeLessThanOrEqual(fullJitter(attempt, options, () => high));
      }),
    );
  });

  it('matches the article: attempt 0..4 with base 100 cap 10 000 draw below 100, 200, 400, 800, 1 600', () => {
    const almostOne = () => 0.999_999;
    expect([0, 1, 2, 3, 4].map((attempt) => fullJitter(attempt, { baseMs: 100, capMs: 10_000 }, almostOne))).toEqual([
      99, 199, 399, 799, 1_599,
    ]);
    expect(fullJitter(10, { baseMs: 100, capMs: 10_000 }, almostOne)).toBe(9_999);
  });

  it('rejects a negative attempt and a cap below the base', () => {
    for (const call of [
      () => fullJitter(-1, { baseMs: 100, capMs: 1_000 }),
      () => fullJitter(1, { baseMs: 100, capMs: 50 }),
      () => fullJitter(1, { baseMs: -1, capMs: 50 }),
    ]) {
      expect(call).toThrow();
      try {
        call();
      } catch (error) {
        expect(isOncelyError(error, 'invalid_option')).toBe(true);
      }
    }
  });
});
