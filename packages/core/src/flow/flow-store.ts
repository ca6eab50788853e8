import type { Scope } from '../scope.js';
import type { IdempotencyStore, StoreCapabilities } from '../store.js';

/** What a phase is: a local transaction (`atomic`) or a foreign call whose result is recorded (`remote`). */
export type FlowPhaseKind = 'atomic' | 'remote';

/** One recovery point: the phase that reached it and the result it recorded. */
export interface FlowPhase {
  readonly name: string;
  readonly kind: FlowPhaseKind;
  /** The phase's result as JSON text; absent when the phase returned `undefined`. */
  readonly result?: string;
}

/** A flow as stored: the request it runs on and the recovery points reached, in order. */
export interface FlowState {
  /** The request payload as JSON text, recorded when the flow was opened. */
  readonly request: string;
  readonly phases: readonly FlowPhase[];
}

/** Arguments of {@link FlowStore.openFlow}. */
export interface OpenFlowInput {
  readonly scope: Scope;
  readonly token: string;
  /** The request payload as JSON text; kept only when the record has no flow yet. */
  readonly request: string;
}

/** Arguments of {@link FlowStore.advance}. */
export interface AdvanceInput {
  readonly scope: Scope;
  readonly token: string;
  /** The recovery point this phase reaches: the number of phases already recorded. */
  readonly position: number;
  readonly name: string;
  readonly kind: FlowPhaseKind;
  /** The lease runs this long from the commit: every recovery point renews it. */
  readonly leaseMs: number;
}

/** What a phase's work hands back: the result to record (JSON text) and the value the caller gets. */
export interface PhaseOutcome<T> {
  readonly result: string | undefined;
  readonly value: T;
}

/** The answer of {@link FlowStore.advance}: `out_of_order` when `position` is not the next one. */
export type AdvanceResult<T> =
  | { readonly kind: 'advanced'; readonly value: T }
  | { readonly kind: 'fence_lost' }
  | { readonly kind: 'out_of_order' };

/** An in-progress flow whose lease lapsed: what a completer takes over. */
export interface AbandonedFlow {
  readonly scope: Scope;
  readonly fingerprint: string;
}

/**
 * A store that keeps multi-step operations (`idempotency.flow`): the request a flow runs on and its
 * recovery points, each advanced in one transaction with the phase's own writes and fenced by the
 * lease token. It keeps every clause of {@link IdempotencyStore}, and these (`flow.*`, tested by
 * `runFlowConformance`):
 * - `flow.capability`: `capabilities.flows` is true exactly when the flow methods exist.
 * - `flow.open.first`: the holder's first `openFlow` records the request and no phases.
 * - `flow.open.resume`: a later `openFlow` (the same owner, or a takeover's) returns the request first
 *   recorded and every phase, in order, results exact; the request it passes is ignored.
 * - `flow.open.fenced`: `openFlow` by a token that does not hold the lease answers `fence_lost` and
 *   records nothing.
 * - `flow.open.fresh`: a record claimed afresh (released, or expired) starts with no flow: nothing of
 *   an earlier life is resumed.
 * - `flow.advance.commit`: `advance` runs `work` in a transaction and commits its writes and the new
 *   recovery point together, renewing the lease.
 * - `flow.advance.rollback`: when `work` throws, neither its writes nor the recovery point are kept,
 *   and the error reaches the caller unchanged.
 * - `flow.advance.fenced`: a token that does not hold the lease (another's, a lapsed one, before or
 *   after a takeover) answers `fence_lost` without running `work`; nothing is written.
 * - `flow.advance.position`: a `position` other than the number of recorded phases answers
 *   `out_of_order` without running `work`.
 * - `flow.advance.race`: of concurrent advances to one position by the holder, exactly one commits.
 * - `flow.abandoned.lapsed`: `listAbandonedFlows` lists opened flows whose lease lapsed, and none that
 *   is held, finished, or never opened.
 */
export interface FlowStore<Tx = unknown> extends IdempotencyStore {
  readonly capabilities: StoreCapabilities & { readonly flows: true };
  /** Opens (or reads back) the flow of the record `token` holds. `flow.open.*`. */
  openFlow(input: OpenFlowInput): Promise<FlowState | 'fence_lost'>;
  /** Runs `work` in a transaction ending with the recovery point `position + 1`. `flow.advance.*`. */
  advance<T>(input: AdvanceInput, work: (tx: Tx) => Promise<PhaseOutcome<T>>): Promise<AdvanceResult<T>>;
  /** Up to `limit` opened flows whose lease lapsed, oldest lapse first. `flow.abandoned.*`. */
  listAbandonedFlows(limit: number): Promise<readonly AbandonedFlow[]>;
}

/** The transaction handle of a flow store's phases. */
export type FlowTransactionOf<S> = S extends FlowStore<infer Tx> ? Tx : never;

/** True when `store` declares the `flows` capability and has the methods. */
export function isFlowStore(store: IdempotencyStore): store is FlowStore<unknown> {
  const candidate = store as Partial<FlowStore<unknown>>;
  return (
    (store.capabilities as { flows?: boolean }).flows === true &&
    typeof candidate.openFlow === 'function' &&
    typeof candidate.advance === 'function' &&
    typeof candidate.listAbandonedFlows === 'function'
  );
}
