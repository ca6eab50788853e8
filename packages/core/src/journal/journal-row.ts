import { OncelyError } from '../errors.js';
import type { JournalEntry, JournalState } from './journal.js';

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

/** Builds the public entry from a stored row, parsing JSON afresh so no caller shares an object. */
export function toJournalEntry(row: JournalRow): JournalEntry {
  const base = {
    operationId: row.operationId,
    key: row.key,
    attempts: row.attempts,
    ...(row.requestJson == null ? {} : { request: JSON.parse(row.requestJson) }),
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
  };
  const data = row.dataJson == null ? undefined : JSON.parse(row.dataJson);
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
      throw new OncelyError('invalid_option', `oncely: unknown journal state "${String(row.state)}"`);
  }
}
