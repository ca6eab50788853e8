import { corruptRecord, type OncelyError, toStorageError } from '../errors.js';
import { assertValidKey } from '../scope.js';
import { isObject } from '../storage/answer-shapes.js';
import type { JournalOperation } from '../storage/storage-operation.js';
import type { BeginResult, JournalEntry, OperationJournal } from './journal.js';

const JOURNAL_STATES: ReadonlySet<unknown> = new Set(['pending', 'unknown', 'succeeded', 'failed']);

/** What is wrong with an entry a journal answered for `operationId` (and, once known, its `key`), if anything. */
function entryProblem(entry: unknown, operationId: string, key: string | undefined): string | undefined {
  if (!isObject(entry)) return 'no entry';
  if (entry.operationId !== operationId) return 'the entry of another operation';
  try {
    assertValidKey(entry.key);
  } catch {
    return 'an entry without a valid key';
  }
  if (key !== undefined && entry.key !== key) return 'an entry whose key changed since begin';
  if (!JOURNAL_STATES.has(entry.state)) return `an entry in an unknown state (${String(entry.state).slice(0, 40)})`;
  const { attempts } = entry;
  if (typeof attempts !== 'number' || !Number.isSafeInteger(attempts) || attempts < 0) return 'an entry without a valid attempt count';
  return undefined;
}

/** The refusal of a journal's answer, to throw: a `StorageError` with code `corrupt_record` naming the journal and the call. */
function refusal(journal: OperationJournal, operation: JournalOperation, problem: string): OncelyError {
  return toStorageError(journal.name, operation, corruptRecord(`the journal answered ${problem}`));
}

/** A `begin` answer as the contract shapes it (`started` or `resumed`, with the operation's entry), or a `corrupt_record`. */
export function checkedBegin(journal: OperationJournal, operationId: string, answer: unknown): BeginResult {
  const problem = !isObject(answer) || (answer.kind !== 'started' && answer.kind !== 'resumed')
    ? 'a begin answer that is neither started nor resumed'
    : entryProblem(answer.entry, operationId, undefined);
  if (problem) throw refusal(journal, 'journal.begin', problem);
  return answer as unknown as BeginResult;
}

/** The entry `recordAttempt` answered, checked: the same operation, under the key `begin` gave, or a `corrupt_record`. */
export function checkedEntry(journal: OperationJournal, operation: JournalOperation, operationId: string, key: string, answer: unknown): JournalEntry {
  const problem = entryProblem(answer, operationId, key);
  if (problem) throw refusal(journal, operation, problem);
  return answer as JournalEntry;
}
