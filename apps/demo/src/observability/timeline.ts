/** How a request ended, as the dashboard colours it. */
export type RequestOutcome = 'executed' | 'replayed' | 'rejected' | 'failed';

/** One request in the timeline. Keys appear only as their hash. */
export interface TimelineEntry {
  /** Arrival time, ms since the epoch. */
  readonly at: number;
  readonly method: string;
  readonly path: string;
  readonly tenant: string | null;
  readonly key_hash: string | null;
  readonly status: number;
  readonly outcome: RequestOutcome;
}

/** Recent requests, newest last, bounded. */
export interface Timeline {
  add(entry: TimelineEntry): void;
  /** The last `limit` entries, newest first. */
  recent(limit: number): TimelineEntry[];
}

/**
 * Classifies a finished request: a replay header wins; 201 and the stored 402 are executed operations;
 * 5xx failed; every other answer was a rejection that started nothing.
 */
export function outcomeOf(status: number, replayed: boolean): RequestOutcome {
  if (replayed) return 'replayed';
  if (status === 201 || status === 402) return 'executed';
  if (status >= 500) return 'failed';
  return 'rejected';
}

/** Creates a timeline keeping the last `capacity` entries. */
export function createTimeline(capacity = 500): Timeline {
  const entries: TimelineEntry[] = [];
  return {
    add(entry) {
      entries.push(entry);
      if (entries.length > capacity) entries.splice(0, entries.length - capacity);
    },
    recent(limit) {
      return entries.slice(-limit).reverse();
    },
  };
}
