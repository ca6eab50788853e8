import { type Clock, systemClock } from '../clock.js';
import type { JournalOutcome, OperationJournal } from './journal.js';
import {
  assertValidOperationId,
  operationNotBegun,
  resolveBegin,
  resolveListUnresolved,
  resolveOutcome,
  resolvePurgeSettled,
} from './journal-input.js';
import { FINAL_JOURNAL_STATES as FINAL, type JournalRow, toJournalEntry as toEntry } from './journal-row.js';

/** Options of {@link memoryJournal}. */
export interface MemoryJournalOptions {
  /** Time for `updatedAt`, staleness and purge age (default: the system clock). */
  readonly clock?: Clock;
}

/** The memory journal: an {@link OperationJournal} plus its size, for tests. */
export interface MemoryJournal extends OperationJournal {
  /** How many entries it holds. */
  readonly size: number;
}

/** Stored form: JSON kept as text so callers never share (or mutate) a stored object. */
type Row = { -readonly [K in keyof JournalRow]: JournalRow[K] };

/**
 * A journal in process memory: for tests, scripts and browsers. It does not survive a restart,
 * so it cannot resume an operation after a crash; use the Postgres, Redis or MongoDB journal for that.
 */
export function memoryJournal(options: MemoryJournalOptions = {}): MemoryJournal {
  const clock = options.clock ?? systemClock;
  const rows = new Map<string, Row>();

  const read = (operationId: string): Row => {
    assertValidOperationId(operationId);
    const row = rows.get(operationId);
    if (!row) throw operationNotBegun('memory', operationId);
    return row;
  };

  return {
    name: 'memory',
    get size() {
      return rows.size;
    },
    async begin(operationId, beginOptions) {
      const { key, requestJson } = resolveBegin(operationId, beginOptions);
      const existing = rows.get(operationId);
      if (existing) return { kind: 'resumed', entry: toEntry(existing) };
      const now = clock.now();
      const row: Row = {
        operationId,
        key,
        attempts: 0,
        state: 'pending',
        requestJson,
        dataJson: undefined,
        lastError: undefined,
        createdAt: now,
        updatedAt: now,
      };
      rows.set(operationId, row);
      return { kind: 'started', entry: toEntry(row) };
    },
    async get(operationId) {
      assertValidOperationId(operationId);
      const row = rows.get(operationId);
      return row && toEntry(row);
    },
    async recordAttempt(operationId) {
      const row = read(operationId);
      if (!FINAL.has(row.state)) {
        row.attempts += 1;
        row.state = 'pending';
        row.lastError = undefined;
        row.updatedAt = clock.now();
      }
      return toEntry(row);
    },
    async complete(operationId, outcome: JournalOutcome) {
      const { state, dataJson } = resolveOutcome(outcome);
      const row = read(operationId);
      if (!FINAL.has(row.state)) {
        row.state = state;
        row.dataJson = dataJson;
        row.lastError = undefined;
        row.updatedAt = clock.now();
      }
      return toEntry(row);
    },
    async markUnknown(operationId, lastError) {
      const row = read(operationId);
      if (!FINAL.has(row.state)) {
        row.state = 'unknown';
        row.lastError = lastError;
        row.updatedAt = clock.now();
      }
      return toEntry(row);
    },
    async listUnresolved(listOptions) {
      const { staleAfterMs, limit } = resolveListUnresolved(listOptions);
      const staleBefore = clock.now() - staleAfterMs;
      return [...rows.values()]
        .filter((row) => row.state === 'unknown' || (row.state === 'pending' && row.updatedAt <= staleBefore))
        .sort((a, b) => a.updatedAt - b.updatedAt)
        .slice(0, limit)
        .map(toEntry);
    },
    async purgeSettled(purgeOptions) {
      const { olderThanMs, limit } = resolvePurgeSettled(purgeOptions);
      const settledBefore = clock.now() - olderThanMs;
      let count = 0;
      for (const row of rows.values()) {
        if (count >= limit) break;
        if (FINAL.has(row.state) && row.updatedAt <= settledBefore) {
          rows.delete(row.operationId);
          count += 1;
        }
      }
      return count;
    },
    async close() {},
  };
}
