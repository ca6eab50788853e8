import { describe, expect, it } from 'vitest';
import { alternate, medianRatio } from '../src/harness/alternating.js';
import type { RunMeasurement } from '../src/harness/closed-loop.js';

const measurement = (opsPerSec: number): RunMeasurement => ({
  ops: opsPerSec,
  elapsedMs: 1000,
  opsPerSec,
  latency: { p50: 1, p99: 2, count: opsPerSec },
});

describe('alternating runs', () => {
  it('rotates the order every round, after one warm-up call per contender', async () => {
    const calls: string[] = [];
    const contender = (name: string) => ({
      name,
      run: async () => {
        calls.push(name);
        return measurement(1);
      },
    });
    await alternate([contender('a'), contender('b'), contender('c')], 3);
    expect(calls).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'b', 'c', 'a', 'c', 'a', 'b']);
  });

  it('a ratio is the median of same-round ratios, not the ratio of medians', async () => {
    // Round by round oncely runs at [1, 0.1, 0.1, 2, 2] of the baseline; the first value is the warm-up.
    const sequence = (name: string, values: number[]) => ({
      name,
      run: async () => measurement(values.shift()!),
    });
    const result = await alternate(
      [sequence('raw', [1, 1, 10, 10, 10, 10]), sequence('oncely', [1, 1, 1, 1, 20, 20])],
      5,
    );
    expect(result.byName.get('raw')!.medianOpsPerSec).toBe(10);
    expect(result.byName.get('oncely')!.medianOpsPerSec).toBe(1);
    expect(medianRatio(result, 'oncely', 'raw')).toBe(1);
  });
});
