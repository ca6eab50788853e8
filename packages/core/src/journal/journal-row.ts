import { corruptRecord } from '../errors.js';
import type { JournalEntry, JournalState, JsonValue } from './journal.js';

/** A journal entry as storage keeps it: JSON as text, times in epoch milliseconds. For journal implementers. */
export interface JournalRow {
  readonly operationId: string;
  readonly key: string;
  readonly attempts: number;
  readonly state: JournalState;
  readonly requestJson?: string | undefined;
  /** The value of a success or the error of a failure, as JSON text. */
  readonly dataJson?: string | undefined;
  readonly lastError?: string | undefined;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Final states: once recorded, nothing changes them. */
export const FINAL_JOURNAL_STATES: ReadonlySet<JournalState> = new Set<JournalState>(['succeeded', 'failed']);

/** Parses JSON text storage holds; text that does not parse was not written by a journal. */
function parseStored(text: string, field: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw corruptRecord(`the journal entry's ${field} is not JSON`);
  }
}

/**
 * Builds the public entry from a stored row, parsing JSON afresh so no caller shares an object. A
 * row this code cannot read throws a `corruptRecord`: call it inside the journal's storage call.
 */
export function toJournalEntry(row: JournalRow): JournalEntry {
  const base = {
    operationId: row.operationId,
    key: row.key,
    attempts: row.attempts,
    ...(row.requestJson == null ? {} : { request: parseStored(row.requestJson, 'request') }),
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
  };
  const data = row.dataJson == null ? undefined : parseStored(row.dataJson, 'outcome');
  switch (row.state) {
    case 'pending':
      return { ...base, state: 'pending' };
    case 'unknown':
      return { ...base, state: 'unknown', ...(row.lastError == null ? {} : { lastError: row.lastError }) };
    case 'succeeded':
      return { ...base, state: 'succeeded', ...(data === undefined ? {} : { value: data }) };
    case 'failed':
      return { ...base, state: 'failed', ...(data === undefined ? {} : { error: data }) };
    default:
      // Storage written by something else: refuse to guess what it means.
      throw corruptRecord(`unknown journal state "${String(row.state)}"`);
  }
}
