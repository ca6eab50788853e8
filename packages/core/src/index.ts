// The user API: the idempotency engine, its errors, fingerprints, replay policies and the memory store.
// Retries, the journal, the outbox, OpenTelemetry and the adapter SPI have entry points of their own
// (`@oncely/core/retry`, `/journal`, `/outbox`, `/otel`, `/adapter`).
export { type Clock, type ManualClock, manualClock, systemClock } from './clock.js';
export { createIdempotency } from './engine/create-idempotency.js';
export type {
  HandlerContext,
  Idempotency,
  IdempotencyOptions,
  IdempotencyRequest,
  IdempotentResponse,
  RunResult,
  TransactionHandlerContext,
  JoinOptions,
} from './engine/types.js';
export {
  isOncelyError,
  isStorageError,
  OncelyError,
  type OncelyErrorCode,
  StorageError,
  type StorageErrorCode,
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
export {
  type Completer,
  type CompleterEvent,
  type CompleterOptions,
  type CompleterRound,
  createCompleter,
} from './flow/completer.js';
export { downstreamKey, downstreamKeyInput, MAX_STEP_LENGTH } from './flow/downstream-key.js';
export type { FlowTransactionOf } from './flow/flow-store.js';
export type { Flow, FlowBody, FlowRequest, FlowResponse, FlowResult } from './flow/run-flow.js';
export { type MemoryFlowTx, type MemoryStore, type MemoryStoreOptions, memoryStore } from './memory/memory-store.js';
export { defaultReplayPolicy, type OutcomeDecision, type ReplayPolicy, stripeReplayPolicy } from './replay-policy.js';
export { assertValidKey, MAX_KEY_LENGTH, type Scope, toScope } from './scope.js';
export type {
  ConsumerOperation,
  ConsumerStage,
  InboxOperation,
  JournalOperation,
  OutboxOperation,
  OutboxStage,
  SetupOperation,
  StorageOperation,
  StoreOperation,
} from './storage/storage-operation.js';
export type {
  IdempotencyRecord,
  IdempotencyStore,
  RecordState,
  StoreCapabilities,
  StoredResponse,
  TerminalState,
  TransactionalStore,
  TransactionOf,
  JoinOf,
} from './store.js';
