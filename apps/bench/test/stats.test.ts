import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { latencyRecorder } from '../src/harness/latency-recorder.js';
import { median, quantileSorted } from '../src/harness/stats.js';

describe('median and quantiles', () => {
  it('median of an odd list is its middle value, of an even list the mean of the two middle values', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('median lies between the smallest and largest value and ignores order', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true, min: -1e9, max: 1e9 }), { minLength: 1 }), (values) => {
        const m = median(values);
        expect(m).toBeGreaterThanOrEqual(Math.min(...values));
        expect(m).toBeLessThanOrEqual(Math.max(...values));
        expect(median([...values].reverse())).toBe(m);
      }),
    );
  });

  it('nearest-rank quantile: p99 of 1..100 is 99, p50 is 50, and quantiles never decrease with q', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantileSorted(sorted, 0.99)).toBe(99);
    expect(quantileSorted(sorted, 0.5)).toBe(50);
    fc.assert(
      fc.property(
        fc.array(fc.integer(), { minLength: 1 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (values, a, b) => {
          const s = [...values].sort((x, y) => x - y);
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          expect(quantileSorted(s, lo)).toBeLessThanOrEqual(quantileSorted(s, hi));
        },
      ),
    );
  });

  it('the latency recorder keeps every sample across buffer growth', () => {
    const recorder = latencyRecorder(4);
    for (let i = 1; i <= 1000; i++) recorder.record(i);
    expect(recorder.summary()).toEqual({ p50: 500, p99: 990, count: 1000 });
  });
});
