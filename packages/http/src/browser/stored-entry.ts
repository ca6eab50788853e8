import { assertValidKey, type JournalOperation, StorageError } from '@oncely/core';
import { type JournalRow, toJournalEntry } from '@oncely/core/adapter';
import type { JournalEntry } from '@oncely/core/journal';

/** The format the browser journals write; an entry in any other format is refused, never guessed at. */
export const ENTRY_FORMAT = 1;

/** An entry as the browser journals store it: the journal row and the format it was written in. */
export interface StoredEntry extends JournalRow {
  readonly format: typeof ENTRY_FORMAT;
}

const STATES = new Set<unknown>(['pending', 'unknown', 'succeeded', 'failed']);

/**
 * A stored entry the journal cannot read: corrupt, or written in another format (an older or newer
 * oncely). It is left in storage as it is, for inspection, and every call on its operation throws this
 * until someone looks: minting a fresh key instead could repeat an effect the old key already had.
 */
export class UnreadableJournalEntryError extends StorageError {
  /** The operation whose entry it is. */
  readonly operationId: string;
  /** What storage holds, as read: the record for IndexedDB, the text for localStorage. */
  readonly stored: unknown;

  constructor(adapter: string, operation: JournalOperation, operationId: string, stored: unknown, problem: string) {
    super(
      adapter,
      operation,
      `the stored entry of "${operationId.slice(0, 64)}" cannot be read (${problem}); ` +
        'it was left as it is for inspection, and nothing is sent for this operation',
      'corrupt_record',
    );
    this.name = 'UnreadableJournalEntryError';
    this.operationId = operationId;
    this.stored = stored;
  }
}

/**
 * The stored value checked field by field; throws {@link UnreadableJournalEntryError} for anything
 * else, carrying `stored` (what storage holds, when `value` was parsed from it).
 */
export function readStoredEntry(
  adapter: string,
  operation: JournalOperation,
  operationId: string,
  value: unknown,
  stored: unknown = value,
): StoredEntry {
  const problem = problemOf(operationId, value);
  if (problem !== undefined) throw new UnreadableJournalEntryError(adapter, operation, operationId, stored, problem);
  return value as StoredEntry;
}

/** The public entry of a stored one (its JSON parsed afresh, so no caller shares an object). */
export function toEntry(stored: StoredEntry): JournalEntry {
  return toJournalEntry(stored);
}

function problemOf(operationId: string, stored: unknown): string | undefined {
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) return 'it is not an object';
  const entry = stored as Record<string, unknown>;
  if (entry.format !== ENTRY_FORMAT) {
    return `it is in format ${JSON.stringify(entry.format) ?? 'undefined'}, and this oncely reads format ${ENTRY_FORMAT}`;
  }
  if (entry.operationId !== operationId) return 'its operationId is not the one it is stored under';
  if (typeof entry.key !== 'string' || !isValidKey(entry.key)) return 'its key is not a valid idempotency key';
  if (!Number.isSafeInteger(entry.attempts) || (entry.attempts as number) < 0) return 'its attempts are not a count';
  if (!STATES.has(entry.state)) return `its state ${JSON.stringify(entry.state) ?? 'undefined'} is not a journal state`;
  for (const field of ['requestJson', 'dataJson'] as const) {
    if (entry[field] !== undefined && !isJsonText(entry[field])) return `its ${field} is not JSON text`;
  }
  if (entry.lastError !== undefined && typeof entry.lastError !== 'string') return 'its lastError is not text';
  for (const field of ['createdAt', 'updatedAt'] as const) {
    if (typeof entry[field] !== 'number' || !Number.isFinite(entry[field])) return `its ${field} is not a time`;
  }
  return undefined;
}

function isValidKey(key: string): boolean {
  try {
    assertValidKey(key);
    return true;
  } catch {
    return false;
  }
}

function isJsonText(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    JSON.parse(value);
    return true;
  } catch {
    return false;
  }
}
