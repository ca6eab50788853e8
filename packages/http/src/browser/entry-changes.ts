import { FINAL_JOURNAL_STATES, type resolveOutcome } from '@oncely/core/adapter';
import type { JournalEntry } from '@oncely/core/journal';
import { ENTRY_FORMAT, type StoredEntry, toEntry } from './stored-entry.js';

// How a stored entry changes, written once for both browser journals. Each change returns the next
// entry, or undefined when the entry is final and stays as it is (the first outcome wins).

/** A new entry: `pending`, no attempts yet, the key drawn by `resolveBegin`. */
export function newEntry(operationId: string, key: string, requestJson: string | undefined, now: number): StoredEntry {
  const request = requestJson === undefined ? {} : { requestJson };
  return { format: ENTRY_FORMAT, operationId, key, attempts: 0, state: 'pending', ...request, createdAt: now, updatedAt: now };
}

/** One more attempt: back to `pending`, the last error cleared. */
export function withAttempt(entry: StoredEntry, now: number): StoredEntry | undefined {
  if (FINAL_JOURNAL_STATES.has(entry.state)) return undefined;
  const { lastError: _cleared, ...rest } = entry;
  return { ...rest, attempts: entry.attempts + 1, state: 'pending', updatedAt: now };
}

/** A definitive outcome, as `resolveOutcome` validated it. */
export function withOutcome(entry: StoredEntry, outcome: ReturnType<typeof resolveOutcome>, now: number): StoredEntry | undefined {
  if (FINAL_JOURNAL_STATES.has(entry.state)) return undefined;
  const { lastError: _cleared, dataJson: _replaced, ...rest } = entry;
  return { ...rest, state: outcome.state, ...(outcome.dataJson === undefined ? {} : { dataJson: outcome.dataJson }), updatedAt: now };
}

/** Given up without a definitive answer. */
export function withUnknown(entry: StoredEntry, lastError: string | undefined, now: number): StoredEntry | undefined {
  if (FINAL_JOURNAL_STATES.has(entry.state)) return undefined;
  const { lastError: _replaced, ...rest } = entry;
  return { ...rest, state: 'unknown', ...(lastError === undefined ? {} : { lastError }), updatedAt: now };
}

/** What `listUnresolved` answers: every `unknown` entry, and `pending` ones untouched since `staleBefore`; oldest first. */
export function unresolvedOf(entries: readonly StoredEntry[], staleBefore: number, limit: number): JournalEntry[] {
  return entries
    .filter((entry) => entry.state === 'unknown' || (entry.state === 'pending' && entry.updatedAt <= staleBefore))
    .sort((a, b) => a.updatedAt - b.updatedAt)
    .slice(0, limit)
    .map(toEntry);
}

/** Deleted by `purgeSettled`: final, and settled no later than `settledBefore`. */
export function isPurgeable(entry: StoredEntry, settledBefore: number): boolean {
  return FINAL_JOURNAL_STATES.has(entry.state) && entry.updatedAt <= settledBefore;
}
