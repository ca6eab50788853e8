import type { EngineEvent } from '@oncely/core';

/** What the service counts since it started (counters live in memory; a restart starts them at 0). */
export interface CounterValues {
  /** First attempts whose outcome was recorded (201 or a final 402). */
  executed: number;
  /** Retries answered from the stored outcome. */
  replayed: number;
  /** Same key, different body: refused with 422. */
  mismatches: number;
  /** A retry arrived while the first attempt still ran: 409. */
  in_progress_collisions: number;
  /** Outcomes not recorded (a 5xx or an error), so a retry executes again. */
  released: number;
  /** Outbox events the relay published to the broker. */
  events_published: number;
  /** Payment events billing applied (one invoice line each). */
  events_consumed: number;
  /** Deliveries billing's inbox recognised and skipped. */
  consumer_duplicates: number;
}

/** The counters and the listeners that move them. */
export interface Counters {
  readonly values: Readonly<CounterValues>;
  /** The engine's `onEvent`. */
  onEngineEvent(event: EngineEvent): void;
  count(name: 'events_published' | 'events_consumed' | 'consumer_duplicates', by?: number): void;
}

/** Creates zeroed counters. */
export function createCounters(): Counters {
  const values: CounterValues = {
    executed: 0,
    replayed: 0,
    mismatches: 0,
    in_progress_collisions: 0,
    released: 0,
    events_published: 0,
    events_consumed: 0,
    consumer_duplicates: 0,
  };
  return {
    values,
    onEngineEvent(event) {
      if (event.type === 'completed') values.executed += 1;
      else if (event.type === 'replayed') values.replayed += 1;
      else if (event.type === 'mismatch') values.mismatches += 1;
      else if (event.type === 'in_progress') values.in_progress_collisions += 1;
      else if (event.type === 'released') values.released += 1;
    },
    count(name, by = 1) {
      values[name] += by;
    },
  };
}
