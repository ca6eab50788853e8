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
  /** Entries newest first, optionally of one tenant. */
  recent(options?: { readonly tenant?: string; readonly limit?: number }): TimelineEntry[];
}

/**
 * Classifies a finished request: a replay header wins; 201 and the stored 402 are executed operations;
 * 5xx and dropped responses failed; every other answer was a rejection that started nothing.
 */
export function outcomeOf(status: number, replayed: boolean): RequestOutcome {
  if (replayed) return 'replayed';
  if (status === 201 || status === 402) return 'executed';
  if (status >= 500 || status === 0) return 'failed';
  return 'rejected';
}

/** Creates a timeline keeping the last `capacity` entries. */
export function createTimeline(capacity = 2_000): Timeline {
  const entries: TimelineEntry[] = [];
  return {
    add(entry) {
      entries.push(entry);
      if (entries.length > capacity) entries.splice(0, entries.length - capacity);
    },
    recent({ tenant, limit = 50 } = {}) {
      const out: TimelineEntry[] = [];
      for (let index = entries.length - 1; index >= 0 && out.length < limit; index--) {
        const entry = entries[index]!;
        if (tenant === undefined || entry.tenant === tenant) out.push(entry);
      }
      return out;
    },
  };
}
