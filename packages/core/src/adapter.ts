// `@oncely/core/adapter`: what an adapter author needs and a user does not. The contracts a store,
// journal, outbox or inbox implements, and the helpers every adapter shares: the storage-call guard,
// option and identifier checks, the safe event emitter and the background loop.

// The idempotency store contract.
export type {
  ClaimInput,
  ClaimResult,
  CompleteInput,
  FenceResult,
  IdempotencyRecord,
  IdempotencyStore,
  LeaseInput,
  RecordState,
  StoreCapabilities,
  StoredResponse,
  TerminalState,
  TransactionalStore,
  TransactionClaim,
  TransactionDecision,
  TransactionOf,
  JoinOf,
} from './store.js';
export { isTransactionalStore } from './store.js';
// Stores that keep only JSON text, and bodies whose JSON text is already known.
export { jsonTextOf, markTextOnly, storedResponseJson, withJsonText } from './memory/stored-json.js';

// The flow store contract: recovery points of multi-step operations.
export type {
  AbandonedFlow,
  AdvanceInput,
  AdvanceResult,
  FlowPhase,
  FlowPhaseKind,
  FlowState,
  FlowStore,
  OpenFlowInput,
  PhaseOutcome,
} from './flow/flow-store.js';
export { isFlowStore } from './flow/flow-store.js';
export { fromJsonText, toJsonText } from './flow/json-text.js';

// The journal contract and what implementations share.
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
export {
  assertValidOperationId,
  MAX_OPERATION_ID_LENGTH,
  newOperationKey,
  operationNotBegun,
  resolveBegin,
  resolveListUnresolved,
  resolveOutcome,
  resolvePurgeSettled,
} from './journal/journal-input.js';
export { FINAL_JOURNAL_STATES, type JournalRow, toJournalEntry } from './journal/journal-row.js';

// The outbox contracts: the writer, the source a relay claims from, the publisher a relay sends with.
export type { Outbox } from './outbox/outbox.js';
export type { ClaimedEvent, NewOutboxEvent, OutboxEvent } from './outbox/outbox-event.js';
export type {
  OutboxClaimInput,
  OutboxDeadLetter,
  OutboxRetry,
  OutboxSource,
  OutboxStats,
  OutboxWakeUp,
} from './outbox/outbox-source.js';
export { type PreparedOutboxEvent, prepareOutboxEvent } from './outbox/prepare-event.js';
export { checkEventHeaders, MAX_EVENT_HEADERS, MAX_HEADER_VALUE_LENGTH } from './outbox/event-headers.js';
export { type MessageProblem, type ParsedMessage, parseBrokerMessage, partitionOf, toBrokerMessage } from './outbox/broker-message.js';
export { captureTraceHeaders, type ContextLike, resolveTraceApi, type SpanContextLike, type SpanLike, type TraceApiLike, type TraceOption, withConsumerSpan } from './observability/trace-context.js';
export type { PublishOutcome, Publisher } from './outbox/publisher.js';
export { aggregateOf } from './outbox/claimed-events.js';

// The inbox contract.
export {
  assertInboxInput,
  type Inbox,
  type InboxEvent,
  type InboxInput,
  type InboxOutcome,
  type PurgeProcessedInput,
} from './inbox/inbox.js';

// What broker consumers report.
export type { BrokerConsumerEvent, BrokerDeliverySubject } from './inbox/broker-consumer-events.js';
export { type BrokerConsumerOptions, type ResolvedBrokerConsumerOptions, resolveBrokerConsumerOptions } from './inbox/broker-consumer-options.js';
export { type BrokerDelivery, type DeliveryPolicy, type DeliveryVerdict, handleDelivery } from './inbox/handle-delivery.js';

// Shared by every adapter.
export { corruptRecord, toStorageError } from './errors.js';
export { emitSafely, type EventBody, eventEmitter } from './events.js';
export { backgroundLoop, type BackgroundLoop, type BackgroundLoopOptions, type LoopStatus } from './loop/background-loop.js';
export { type LoopOwnerOptions, loopOwnerDefaults } from './loop/loop-owner-options.js';
export { assertIdentifier, MAX_IDENTIFIER_LENGTH } from './outbox/identifier.js';
export { integerOption, invalidOption, numberOption } from './options/option-checks.js';
export { hasControlCharacter } from './scope.js';
export { type StorageGuard, storageGuard, storageTransaction } from './storage/storage-call.js';
