import type { Contender } from './alternating.js';
import { closedLoop } from './closed-loop.js';
import type { Operations } from '../subjects/operations.js';

/** Timing parameters shared by every closed-loop workload. */
export interface TimingOptions {
  readonly concurrency: number;
  readonly durationMs: number;
}

/** A contender issuing first requests with keys never used before (the run number is in the key). */
export function firstRequestContender(ops: Operations, timing: TimingOptions, keyPrefix: string): Contender {
  let run = 0;
  return {
    name: ops.name,
    async run() {
      const id = run++;
      const measurement = await closedLoop({ ...timing, operation: (i) => ops.first(`${keyPrefix}-f${id}-${i}`) });
      await ops.settle();
      return measurement;
    },
  };
}

/** Completes `count` keys through `ops` so they can be replayed; returns the keys. */
export async function seedKeys(ops: Operations, keyPrefix: string, count: number, concurrency = 16): Promise<string[]> {
  const keys = Array.from({ length: count }, (_, i) => `${keyPrefix}-seed-${i}`);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < keys.length) await ops.first(keys[next++]!);
    }),
  );
  await ops.settle();
  return keys;
}

/** A contender replaying `keys` round-robin. */
export function replayContender(ops: Operations, timing: TimingOptions, keys: readonly string[]): Contender {
  return {
    name: ops.name,
    run: () => closedLoop({ ...timing, operation: (i) => ops.replay(keys[i % keys.length]!) }),
  };
}
