export type {
  PGliteLike,
  PGliteResultLike,
  PGliteTransactionLike,
  PgClientLike,
  PgQueryConfigLike,
  PgPoolClientLike,
  PgPoolLike,
  PgQueryResultLike,
  PostgresDb,
  PostgresJsLike,
  PostgresJsSqlLike,
  PostgresTx,
  SqlResult,
  TxOf,
} from './driver/postgres-db.js';
export { type SqlConnection, type SqlDriver, type SqlDriverOptions, sqlDriver, type TransactionEnd } from './driver/sql-driver.js';
export { MAX_IDENTIFIER_BYTES, qualifiedName, type QuotedIdentifier, quoteIdentifier } from './identifiers/identifier.js';
export { DEFAULT_JOURNAL_TABLE, type PostgresJournal, type PostgresJournalOptions, postgresJournal } from './journal/postgres-journal.js';
export { migrate } from './migrate/migrate.js';
export { type MigrateOptions, type Migration, migrations } from './migrate/migrations.js';
export { DEFAULT_TABLE, type BridgedStoreOptions, type PostgresStore, type PostgresStoreOptions, postgresStore } from './store/postgres-store.js';
export type { BridgeDb, BridgeTx, TransactionBridge } from './bridge/transaction-bridge.js';
export { HeldRouteDeclined } from './bridge/transaction-bridge.js';
export type { PostgresJoinable } from './driver/tx-driver.js';
export {
  DEFAULT_OUTBOX_TABLE,
  type BridgedOutboxOptions,
  type PostgresOutbox,
  type PostgresOutboxOptions,
  postgresOutbox,
} from './outbox/postgres-outbox.js';
export {
  DEFAULT_INBOX_TABLE,
  type BridgedInboxOptions,
  type InboxBatchItem,
  type InboxBatchResult,
  type PostgresInbox,
  type PostgresInboxOptions,
  postgresInbox,
} from './inbox/postgres-inbox.js';
