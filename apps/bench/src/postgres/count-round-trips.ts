import { seedKeys } from '../harness/workload-runs.js';
import type { Operations } from '../subjects/operations.js';

/** Counts that only grow, read before and after some work. */
export type TrafficCounter = () => { readonly roundTrips: number; readonly statements: number };

/** Round trips and statements per operation. */
export interface PerOperation {
  readonly roundTrips: number;
  readonly statements: number;
}

async function perOperation(counter: TrafficCounter, count: number, work: () => Promise<void>): Promise<PerOperation> {
  const before = counter();
  await work();
  const after = counter();
  return {
    roundTrips: (after.roundTrips - before.roundTrips) / count,
    statements: (after.statements - before.statements) / count,
  };
}

/** Counts `count` sequential first requests and, when `withReplay`, `count` replays of seeded keys. */
export async function countRoundTrips(
  counter: TrafficCounter,
  ops: Operations,
  keyPrefix: string,
  count: number,
  withReplay: boolean,
): Promise<{ first: PerOperation; replay?: PerOperation }> {
  const first = await perOperation(counter, count, async () => {
    for (let i = 0; i < count; i++) await ops.first(`${keyPrefix}-count-${i}`);
  });
  if (!withReplay) return { first };
  const keys = await seedKeys(ops, `${keyPrefix}-count-replay`, count);
  const replay = await perOperation(counter, count, async () => {
    for (const key of keys) await ops.replay(key);
  });
  return { first, replay };
}
