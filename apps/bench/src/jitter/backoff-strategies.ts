import { fullJitter } from '@oncely/core/retry';
import type { SeededRandom } from './seeded-random.js';

/** The five schedules of the experiment. */
export const STRATEGIES = ['none', 'exponential', 'equal', 'full', 'decorrelated'] as const;

/** One schedule's name. */
export type StrategyName = (typeof STRATEGIES)[number];

/** Base and cap of every schedule, in ms (the article's simulator used 5 and 2,000). */
export interface BackoffBounds {
  readonly baseMs: number;
  readonly capMs: number;
}

/** One client's schedule: the sleep before retry number `attempt` (1 for the first retry). */
export type Backoff = (attempt: number) => number;

/**
 * Creates a fresh schedule for one client. `full` is oncely's own `fullJitter`; `decorrelated` keeps
 * its previous sleep, so every client needs its own instance.
 */
export function backoffFor(name: StrategyName, bounds: BackoffBounds, random: SeededRandom): Backoff {
  const { baseMs, capMs } = bounds;
  const expo = (attempt: number) => Math.min(capMs, baseMs * 2 ** attempt);
  switch (name) {
    case 'none':
      return () => 0;
    case 'exponential':
      return expo;
    case 'equal':
      return (attempt) => expo(attempt) / 2 + random.uniform(0, expo(attempt) / 2);
    case 'full':
      return (attempt) => fullJitter(attempt, bounds, random.next);
    case 'decorrelated': {
      let sleep = baseMs;
      return () => {
        sleep = Math.min(capMs, random.uniform(baseMs, sleep * 3));
        return sleep;
      };
    }
  }
}
