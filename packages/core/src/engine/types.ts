import type { Clock } from '../clock.js';
import type { EngineEvent, EventListener } from '../events.js';
import type { FingerprintOptions } from '../fingerprint/fingerprint.js';
import type { FlowTransactionOf } from '../flow/flow-store.js';
import type { Flow, FlowRequest, FlowResponse, FlowResult } from '../flow/run-flow.js';
import type { ReplayPolicy } from '../replay-policy.js';
import type { Scope } from '../scope.js';
import type { IdempotencyRecord, IdempotencyStore, JoinOf, StoredResponse, TerminalState, TransactionOf } from '../store.js';
import type { IdempotencyRequest } from './idempotency-request.js';

export type { IdempotencyRequest };

/** What a handler returns and what a replay gives back. */
export interface IdempotentResponse<B = unknown> {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: B;
  /** Id of the created resource: kept for reconciliation and for the `reference` strategy. */
  readonly resourceId?: string;
}

/** What a handler receives in lease mode. */
export interface HandlerContext {
  /** Aborted when the lease lapses or is lost, or the caller's signal aborts. */
  readonly signal: AbortSignal;
  /** The lease token this execution holds. */
  readonly token: string;
  /** Fencing counter: pass it to downstream systems so they can refuse a stale owner's writes. */
  readonly fence: number;
  readonly scope: Scope;
  readonly keyHash: string;
  /** Renews the lease (default: the engine's `leaseMs`); throws `lease_lost` if it was taken over. */
  extendLease(ms?: number): Promise<void>;
  /** The derived idempotency key of `step` to forward downstream: stable across retries and takeovers (see `downstreamKey`). */
  downstreamKey(step: string): Promise<string>;
}

/** What a handler receives in transactional mode: the open transaction as well. */
export interface TransactionHandlerContext<Tx> extends HandlerContext {
  readonly tx: Tx;
}

/** The third argument of `runInTransaction`: the caller's open transaction to join. */
export interface JoinOptions<S> {
  /** A transaction the caller opened and will commit or roll back; the store's `join` accepts it. */
  readonly tx: JoinOf<S>;
}

/** The outcome of `run` / `runInTransaction`. */
export type RunResult<B = unknown> =
  | {
      readonly kind: 'executed';
      readonly response: IdempotentResponse<B>;
      /** What was recorded: a terminal state, or `released` so a retry may execute again. */
      readonly state: TerminalState | 'released';
    }
  | { readonly kind: 'replayed'; readonly response: IdempotentResponse<B>; readonly state: TerminalState }
  | { readonly kind: 'in_progress'; readonly retryAfterMs: number }
  | { readonly kind: 'mismatch' };

/** Options of {@link createIdempotency}. */
export interface IdempotencyOptions<S extends IdempotencyStore> {
  readonly store: S;
  /** How long an owner holds an in-progress record before another attempt may take over. */
  readonly leaseMs?: number;
  /** How long a record is kept: at least as long as clients may retry. */
  readonly retentionMs?: number;
  /** Which outcomes are stored and replayed; default {@link defaultReplayPolicy}. */
  readonly replay?: ReplayPolicy;
  readonly onEvent?: EventListener<EngineEvent>;
  /** Default fingerprint options for every request. */
  readonly fingerprint?: FingerprintOptions;
  /** Largest JSON body stored for replay, in UTF-8 bytes (default 1 MiB). */
  readonly maxStoredBytes?: number;
  /**
   * A body over `maxStoredBytes`: `omit` stores status and headers only (and says so in an event);
   * `reference` stores the response's `resourceId` and calls `rebuild` on replay.
   */
  readonly oversize?: 'omit' | 'reference';
  /** Rebuilds a replay from the stored status, headers and `resourceId` (`reference` strategy). */
  readonly rebuild?: (stored: StoredResponse & { readonly resourceId: string }) => Promise<IdempotentResponse>;
  readonly clock?: Clock;
}

/** The engine returned by {@link createIdempotency}. */
export interface Idempotency<S extends IdempotencyStore> {
  readonly store: S;
  /** Lease mode: claim (one round trip), run the handler, complete or release (one more). */
  run<B>(
    request: IdempotencyRequest,
    handler: (context: HandlerContext) => Promise<IdempotentResponse<B>>,
  ): Promise<RunResult<B>>;
  /**
   * Transactional mode: claim, handler writes and saved result commit in one transaction. With
   * `{ tx }`, joins a transaction the caller already opened instead (the store's `join`): the claim
   * and the saved result are written in `tx` and commit when the caller commits it.
   */
  runInTransaction<B>(
    request: IdempotencyRequest,
    handler: (context: TransactionHandlerContext<TransactionOf<S>>) => Promise<IdempotentResponse<B>>,
    options?: JoinOptions<S>,
  ): Promise<RunResult<B>>;
  /**
   * A multi-step operation: atomic local phases and remote calls, each ending at a recovery point; a
   * retry (or a completer) resumes at the last one. Needs a store with `capabilities.flows`.
   */
  flow<B>(request: FlowRequest, body: (flow: Flow<FlowTransactionOf<S>>) => Promise<FlowResponse<B>>): Promise<FlowResult<B>>;
  /** The caller's own record, for lookup and reconciliation endpoints. */
  get(scope: { tenant: string; principal?: string; operation: string; key: string }): Promise<IdempotencyRecord | undefined>;
  /** Deletes up to `limit` expired records. */
  purgeExpired(limit?: number): Promise<number>;
}
