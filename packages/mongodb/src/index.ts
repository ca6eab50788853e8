export {
  assertLeaseClock,
  assertTransactions,
  deploymentFromHello,
  detectDeployment,
  type MongoDeployment,
} from './deployment/deployment.js';
export { assertSimpleCollation } from './deployment/collation.js';
export { classifyMongoError, type MongoFailure } from './errors/mongo-errors.js';
export { DEFAULT_COLLECTION, type MongoStore, type MongoStoreOptions, mongoStore } from './store/mongo-store.js';
export type { IdempotencyDocument } from './store/record-document.js';
export { decodeScopeId, encodeScopeId } from './store/scope-id.js';
export {
  type MongoTransactionalStore,
  type MongoTransactionalStoreOptions,
  mongoTransactionalStore,
} from './store/transactional-store.js';
export type { JournalDocument } from './journal/journal-queries.js';
export { DEFAULT_JOURNAL_COLLECTION, type MongoJournal, type MongoJournalOptions, mongoJournal } from './journal/mongo-journal.js';
export { type InboxDocument, inboxId, type MongoInbox, type MongoInboxOptions, mongoInbox } from './inbox/mongo-inbox.js';
export { type MongoOutbox, type MongoOutboxOptions, mongoOutbox } from './outbox/mongo-outbox.js';
export type { OutboxDocument, SequenceDocument } from './outbox/outbox-queries.js';
