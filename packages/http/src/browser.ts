export { type BrowserFetchOptions, idempotentFetch } from './browser/idempotent-fetch.js';
export { type IndexedDbJournal, type IndexedDbJournalOptions, indexedDbJournal } from './browser/indexeddb-journal.js';
export { type LocalStorageJournal, type LocalStorageJournalOptions, localStorageJournal } from './browser/local-storage-journal.js';
export { type LockMode, lockName, withOperationLock } from './browser/operation-lock.js';
export { ENTRY_FORMAT, UnreadableJournalEntryError } from './browser/stored-entry.js';
export {
  type OperationMessages,
  type OperationView,
  PAYMENT_MESSAGES,
  type TrackedOperation,
  type TrackOperationOptions,
  trackOperation,
} from './browser/track-operation.js';
