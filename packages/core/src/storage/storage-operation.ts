/**
 * What an idempotency store was doing: its `IdempotencyStore` methods, `transaction` (the engine's
 * call of `TransactionalStore.transaction`), the steps inside a store transaction (`begin`, `save`,
 * `commit`) and index setup. These are the stages the engine's `storage_error` events name.
 */
export type StoreOperation =
  | 'claim'
  | 'complete'
  | 'release'
  | 'extend'
  | 'get'
  | 'purgeExpired'
  | 'transaction'
  | 'begin'
  | 'save'
  | 'commit'
  | 'ensureIndexes'
  | 'openFlow'
  | 'advance'
  | 'listAbandonedFlows';

/** What an `OperationJournal` was doing: one of its methods, as `journal.<method>`, or opening its storage. */
export type JournalOperation = `journal.${
  | 'open'
  | 'begin'
  | 'get'
  | 'recordAttempt'
  | 'complete'
  | 'markUnknown'
  | 'listUnresolved'
  | 'purgeSettled'
  | 'ensureIndexes'}`;

/**
 * The `OutboxSource` methods a relay calls. Relay events (`relay_error`, `outbox_lease_lost`) name
 * these as their `stage`, and a failing source reports `outbox.<stage>`.
 */
export type OutboxStage =
  | 'claim'
  | 'markPublished'
  | 'reschedule'
  | 'deadLetter'
  | 'release'
  | 'stats'
  | 'purgePublished'
  | 'subscribe';

/** What an outbox was doing: a source method, or the writer's `enqueue` and `requeue`, as `outbox.<method>`. */
export type OutboxOperation = `outbox.${OutboxStage | 'enqueue' | 'requeue' | 'ensureIndexes'}`;

/** What an `Inbox` was doing: one of its methods, as `inbox.<method>`. */
export type InboxOperation = `inbox.${'process' | 'run' | 'runBatch' | 'purgeProcessed' | 'ensureIndexes'}`;

/**
 * The steps of a broker consumer (Redis streams, NATS JetStream, RabbitMQ): creating its group
 * (consumer, queue), reading, taking over another consumer's stale entries, acknowledging, and
 * parking an event that failed too often. Its `consumer_error` events name them.
 */
export type ConsumerStage = 'group' | 'read' | 'claim' | 'ack' | 'deadLetter';

/** What a broker consumer was doing, as `consumer.<stage>`. */
export type ConsumerOperation = `consumer.${ConsumerStage}`;

/** Setting storage up before any contract method runs: running migrations, asking the server what it is. */
export type SetupOperation = 'migrate' | 'detectDeployment' | 'checkCollation';

/**
 * Every `operation` a `StorageError` can name, shared by all adapters: the idempotency store's
 * operations are bare method names (what the engine reports); every other contract prefixes its
 * own (`journal.begin`, `outbox.claim`, `inbox.process`, `consumer.read`).
 */
export type StorageOperation =
  | StoreOperation
  | JournalOperation
  | OutboxOperation
  | InboxOperation
  | ConsumerOperation
  | SetupOperation;
