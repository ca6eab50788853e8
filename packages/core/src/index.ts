export { type Clock, type ManualClock, manualClock, systemClock } from './clock.js';
export {
  createIdempotency,
  type HandlerContext,
  type Idempotency,
  type IdempotencyOptions,
  type IdempotencyRequest,
  type IdempotentResponse,
  type RunResult,
  type TransactionHandlerContext,
} from './engine.js';
export {
  isOncelyError,
  isStorageError,
  OncelyError,
  type OncelyErrorCode,
  StorageError,
  toStorageError,
} from './errors.js';
export type {
  EngineEvent,
  EventListener,
  IdempotencyEvent,
  IdempotencyEventBase,
  PurgeEvent,
} from './events.js';
export { type CanonicalizeOptions, canonicalize, DEFAULT_MAX_DEPTH } from './fingerprint/canonicalize.js';
export type { FieldPath } from './fingerprint/field-paths.js';
export { type FingerprintOptions, fingerprint, fingerprintInput } from './fingerprint/fingerprint.js';
export { keyHash, sha256Hex } from './fingerprint/sha256.js';
export { type MemoryStore, type MemoryStoreOptions, memoryStore } from './memory/memory-store.js';
export { defaultReplayPolicy, type OutcomeDecision, type ReplayPolicy, stripeReplayPolicy } from './replay-policy.js';
export { type BackoffOptions, fullJitter } from './retry/full-jitter.js';
export {
  type BreakerAdmission,
  type BreakerMode,
  type BreakerPermit,
  type CallReport,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  circuitBreaker,
} from './retry/circuit-breaker.js';
export {
  type AttemptEffect,
  type AttemptResult,
  type Classification,
  type Classifier,
  classifyError,
  classifyStatus,
  defaultClassify,
  type RetryReason,
} from './retry/classify.js';
export type { BreakerState, RetryEvent, StopReason } from './retry/events.js';
export type { RetryOutcome } from './retry/outcome.js';
export { parseRetryAfter } from './retry/retry-after.js';
export { type BudgetDecision, type RetryBudget, type RetryBudgetOptions, retryBudget } from './retry/retry-budget.js';
export { isRetryPolicy, type RetryPolicy, type RetryPolicyOptions, retryPolicy } from './retry/retry-policy.js';
export { type AttemptContext, type RetryCallOptions, retry } from './retry/retry.js';
export {
  describeError,
  type OperationAttemptContext,
  type RetryOperationOptions,
  retryOperation,
} from './journal/retry-operation.js';
export { assertValidKey, MAX_KEY_LENGTH, type Scope, toScope } from './scope.js';
export {
  type ClaimInput,
  type ClaimResult,
  type CompleteInput,
  type FenceResult,
  type IdempotencyRecord,
  type IdempotencyStore,
  isTransactionalStore,
  type LeaseInput,
  type RecordState,
  type StoreCapabilities,
  type StoredResponse,
  type TerminalState,
  type TransactionalStore,
  type TransactionClaim,
  type TransactionDecision,
  type TransactionOf,
} from './store.js';
export { type MeterLike, type OtelMetricsOptions, otelMetrics } from './observability/otel-metrics.js';
export { type OtelRetryMetricsOptions, otelRetryMetrics } from './observability/otel-retry-metrics.js';
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
export { type MemoryJournal, type MemoryJournalOptions, memoryJournal } from './journal/memory-journal.js';
export type { ClaimedEvent, NewOutboxEvent, OutboxEvent } from './outbox/outbox-event.js';
export { assertIdentifier, MAX_IDENTIFIER_LENGTH } from './outbox/identifier.js';
export { type PreparedOutboxEvent, prepareOutboxEvent } from './outbox/prepare-event.js';
export type {
  OutboxClaimInput,
  OutboxDeadLetter,
  OutboxRetry,
  OutboxSource,
  OutboxStats,
  OutboxWakeUp,
} from './outbox/outbox-source.js';
export type { PublishOutcome, Publisher } from './outbox/publisher.js';
export type { RelayEvent, RelayEventSubject, RelayStage } from './outbox/relay-events.js';
export type { PurgeOptions, RelayOptions } from './outbox/relay-options.js';
export { createRelay, type Relay, type RelayBatch, type RelayStatus } from './outbox/relay.js';
export { assertInboxInput, type Inbox, type InboxEvent, type InboxInput, type InboxOutcome } from './inbox/inbox.js';
export { type GaugeMeterLike, otelOutboxMetrics } from './outbox/otel-outbox-metrics.js';
