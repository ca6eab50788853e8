// `@oncely/core/journal`: the operation journal a caller keeps its idempotency keys in, and retries over it.
export type {
  BeginOptions,
  BeginResult,
  JournalEntry,
  JournalEntryBase,
  JournalOutcome,
  JournalState,
  JsonValue,
  ListUnresolvedOptions,
  OperationJournal,
  PurgeSettledOptions,
} from './journal/journal.js';
export { type MemoryJournal, type MemoryJournalOptions, memoryJournal } from './journal/memory-journal.js';
export {
  describeError,
  type OperationAttemptContext,
  type RetryOperationOptions,
  retryOperation,
} from './journal/retry-operation.js';
