import type { RunMeasurement } from './closed-loop.js';
import { median } from './stats.js';

/** Something measured once per round. */
export interface Contender {
  readonly name: string;
  /** One timed run; called once per round, after one untimed warm-up call. */
  readonly run: () => Promise<RunMeasurement>;
}

/** Every contender's runs, round by round, and their medians. */
export interface AlternatingResult {
  readonly rounds: number;
  readonly byName: ReadonlyMap<string, ContenderResult>;
}

/** One contender's runs and medians. */
export interface ContenderResult {
  readonly name: string;
  readonly runs: readonly RunMeasurement[];
  readonly medianOpsPerSec: number;
  readonly medianP50: number;
  readonly medianP99: number;
}

/**
 * Runs each contender once per round, rotating the order every round so no contender always runs
 * first (warm caches, JIT) or last (a tired machine); reports medians over rounds.
 */
export async function alternate(contenders: readonly Contender[], rounds: number): Promise<AlternatingResult> {
  const runs = new Map<string, RunMeasurement[]>(contenders.map((c) => [c.name, []]));
  for (const contender of contenders) await contender.run();
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < contenders.length; i++) {
      const contender = contenders[(i + round) % contenders.length]!;
      runs.get(contender.name)!.push(await contender.run());
    }
  }
  const byName = new Map<string, ContenderResult>();
  for (const [name, list] of runs) {
    byName.set(name, {
      name,
      runs: list,
      medianOpsPerSec: median(list.map((r) => r.opsPerSec)),
      medianP50: median(list.map((r) => r.latency.p50)),
      medianP99: median(list.map((r) => r.latency.p99)),
    });
  }
  return { rounds, byName };
}

/**
 * Throughput of `numerator` over `denominator`, as the median of the per-round ratios: both ran in
 * the same round, so slow drift of the machine cancels out.
 */
export function medianRatio(result: AlternatingResult, numerator: string, denominator: string): number {
  const a = result.byName.get(numerator);
  const b = result.byName.get(denominator);
  if (!a || !b) throw new Error(`bench: no contender named ${a ? denominator : numerator}`);
  return median(a.runs.map((run, round) => run.opsPerSec / b.runs[round]!.opsPerSec));
}
