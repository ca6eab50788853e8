import { type Clock, systemClock } from '../clock.js';
import type { EventListener } from '../events.js';

/** What every owner of a background loop (a relay, a broker consumer) takes to be tested deterministically and heard. */
export interface LoopOwnerOptions<Event> {
  /** Drives every wait, timeout and lag; inject a manual clock in tests (default the system clock). */
  readonly clock?: Clock;
  /** Source of jitter; injectable for deterministic tests (default `Math.random`). */
  readonly random?: () => number;
  /** Hears what happens; a listener that throws is ignored. */
  readonly onEvent?: EventListener<Event>;
}

/** The defaults of {@link LoopOwnerOptions}. */
export function loopOwnerDefaults<Event>(options: LoopOwnerOptions<Event>): { readonly clock: Clock; readonly random: () => number } {
  return { clock: options.clock ?? systemClock, random: options.random ?? Math.random };
}
