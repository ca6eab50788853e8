import { type BackoffBounds, STRATEGIES, type StrategyName } from './backoff-strategies.js';
import { simulateOcc } from './occ-simulation.js';

/** Means over seeds for one (clients, strategy) cell. */
export interface OccCell {
  readonly clients: number;
  readonly strategy: StrategyName;
  readonly meanCalls: number;
  readonly meanCompletionMs: number;
}

/** Options of {@link runOccExperiment}. */
export interface OccExperimentOptions {
  readonly clientCounts: readonly number[];
  /** Runs per cell; run `i` of every cell uses seed `firstSeed + i`, so strategies face the same draws of chance per index. */
  readonly seeds: number;
  readonly firstSeed?: number;
  readonly bounds?: BackoffBounds;
}

/** The article's parameters: base 5 ms, cap 2 s, network 10 ± 2 ms. */
export const BROOKER_BOUNDS: BackoffBounds = { baseMs: 5, capMs: 2_000 };
const NETWORK = { meanMs: 10, sdMs: 2 };

/** Every strategy at every client count, averaged over `seeds` runs. */
export function runOccExperiment(options: OccExperimentOptions): OccCell[] {
  const bounds = options.bounds ?? BROOKER_BOUNDS;
  const firstSeed = options.firstSeed ?? 1;
  const cells: OccCell[] = [];
  for (const clients of options.clientCounts) {
    for (const strategy of STRATEGIES) {
      let calls = 0;
      let completion = 0;
      for (let i = 0; i < options.seeds; i++) {
        const run = simulateOcc({ clients, strategy, seed: firstSeed + i, bounds, network: NETWORK });
        calls += run.calls;
        completion += run.completionMs;
      }
      cells.push({ clients, strategy, meanCalls: calls / options.seeds, meanCompletionMs: completion / options.seeds });
    }
  }
  return cells;
}
