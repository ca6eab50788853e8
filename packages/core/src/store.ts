import type { Scope } from './scope.js';

/** `in_progress` is owned by one lease holder; the other two are terminal and replayed. */
export type RecordState = 'in_progress' | 'succeeded' | 'failed_final';

/** A terminal state: what a completed record replays as. */
export type TerminalState = Exclude<RecordState, 'in_progress'>;

/** What the engine stores and replays. `body` must be JSON. */
export interface StoredResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  /** Id of the resource the operation created, for reconciliation and the `reference` strategy. */
  readonly resourceId?: string;
  /** True when the body was too large to store (see `maxStoredBytes`). */
  readonly bodyOmitted?: boolean;
}

/**
 * A record as a store reports it (`store.get.record`). Expired records are never reported: they are
 * absent (`store.get.expired`).
 */
export interface IdempotencyRecord {
  readonly scope: Scope;
  readonly fingerprint: string;
  readonly state: RecordState;
  /** Fencing counter: 1 for the first owner, +1 at every lease takeover. */
  readonly fence: number;
  /** Terminal records only: exactly what `complete` stored. */
  readonly response?: StoredResponse;
  /** In-progress records only: how long the current lease still runs, by the store's clock; 0 once it lapsed. */
  readonly leaseRemainingMs?: number;
  /** When the record was first claimed; a takeover keeps it, a claim of an expired record starts anew. */
  readonly createdAt: Date;
  /** When retention ends, by the store's clock: from then on the record is absent. */
  readonly expiresAt: Date;
}

/** Arguments of {@link IdempotencyStore.claim}. */
export interface ClaimInput {
  readonly scope: Scope;
  readonly fingerprint: string;
  /** Opaque lease token chosen by the engine, unique to this claim; every later compare-and-set names it. */
  readonly token: string;
  /** How long the lease runs from the claim, by the store's clock. */
  readonly leaseMs: number;
  /** How long the record is kept from the claim; the engine never passes less than `leaseMs`. */
  readonly retentionMs: number;
}

/** The answer of an atomic claim-or-read. */
export type ClaimResult =
  | { readonly kind: 'claimed'; readonly fence: number; readonly takeover: boolean }
  | { readonly kind: 'existing'; readonly record: IdempotencyRecord };

/** Arguments of {@link IdempotencyStore.complete}. */
export interface CompleteInput {
  readonly scope: Scope;
  readonly token: string;
  readonly state: TerminalState;
  readonly response: StoredResponse;
  /** How long the outcome is kept from this call, whatever the claim said (`store.complete.retention`). */
  readonly retentionMs: number;
}

/** Arguments of {@link IdempotencyStore.release} and {@link IdempotencyStore.extend}. */
export interface LeaseInput {
  readonly scope: Scope;
  readonly token: string;
}

/** Result of a compare-and-set on the lease token: `fence_lost` means another owner took over. */
export type FenceResult = 'ok' | 'fence_lost';

/** Optional abilities, declared rather than guessed. */
export interface StoreCapabilities {
  /** Claim, business writes and result can commit in one transaction (`runInTransaction`). */
  readonly transactions: boolean;
  /** The server removes expired records itself (Redis TTL, MongoDB TTL index). */
  readonly nativeTtl: boolean;
  /** Multi-step operations with recovery points (`idempotency.flow`): see `FlowStore`. Absent means false. */
  readonly flows?: boolean;
}

/**
 * The storage contract every adapter implements and `@oncely/testkit` verifies: each clause below has
 * an id, and the test that proves it carries that id in its name (the testkit README has the table).
 * Every method either answers or throws a `StorageError`; none swallows a failure.
 *
 * One clock judges every time: the store's (the server's for a server). A record is *live* until its
 * retention ends (`expiresAt`); an expired record is absent to every reader and every call, before
 * any cleanup. An in-progress record is *held* by the token of its last claim while its lease runs;
 * at its lease expiry the lease *lapses*. Only the holder's `complete`, `extend` and `release` are
 * accepted; each is one atomic compare-and-set, and everything else answers `fence_lost` and changes
 * nothing.
 *
 * The lease and retention algebra (`now` is the store's clock at the call):
 *
 * | call | lease expiry | retention expiry | fence | createdAt | answer |
 * | --- | --- | --- | --- | --- | --- |
 * | claim, key absent or expired | now + leaseMs | now + retentionMs | 1 | now | claimed, takeover false |
 * | claim, lease lapsed, same fingerprint | now + leaseMs | now + retentionMs | fence + 1 | kept | claimed, takeover true |
 * | claim, any other case | unchanged | unchanged | unchanged | unchanged | existing, the record as it stands |
 * | complete by the holder | ends | now + its retentionMs | unchanged | unchanged | ok |
 * | extend by the holder | now + leaseMs | max(unchanged, new lease expiry) | unchanged | unchanged | ok |
 * | release by the holder | the record is deleted: the next claim is a fresh one (fence 1) | | | | ok |
 * | complete, extend, release by anyone else | unchanged | unchanged | unchanged | unchanged | fence_lost |
 *
 * Clauses, by method:
 * - claim: `store.claim.absent` (first claim: fence 1, the lease and retention above),
 *   `store.claim.held` (a running lease is read, not taken), `store.claim.terminal` (an outcome is
 *   replayed exactly, with no lease), `store.claim.expired` (an expired record is claimed afresh:
 *   fence 1, new createdAt, any fingerprint), `store.claim.takeover` (fence + 1, takeover true, the new
 *   token holds a new lease), `store.claim.takeover-retention` (retention restarts, the old one no
 *   longer counts), `store.claim.takeover-created-at` (createdAt kept),
 *   `store.claim.takeover-fingerprint` (a lapsed lease with another fingerprint is not taken over),
 *   `store.claim.atomic` (of concurrent first claims exactly one is claimed),
 *   `store.claim.takeover-atomic` (of concurrent takeovers exactly one wins).
 * - complete: `store.complete.holder` (stores state and response exactly, ends the lease, keeps fence
 *   and createdAt), `store.complete.retention`, `store.complete.final` (an outcome is final: complete,
 *   extend and release of it are refused, even by its owner), `store.complete.token` (a token that
 *   does not hold the lease is refused), `store.complete.lapsed` (the owner of a lapsed lease is
 *   refused, before and after a takeover), `store.complete.race` (a complete as the lease lapses and a
 *   takeover never both win).
 * - release: `store.release.holder` (deletes), `store.release.token`, `store.release.lapsed`,
 *   `store.release.race` (a release racing a takeover never deletes the new owner's record).
 * - extend: `store.extend.holder` (renews; fence kept), `store.extend.carries-retention` (retention
 *   never ends while the lease runs), `store.extend.token`, `store.extend.lapsed` (a lapsed lease is
 *   not revived), `store.extend.race`.
 * - every compare-and-set: `store.cas.absent` (on an absent key refused, nothing created),
 *   `store.cas.atomic` (of the holder's concurrent completes and release exactly one ends the lease).
 * - get: `store.get.record` (reports what claim reports), `store.get.expired`.
 * - purgeExpired: `store.purge.bounded` (at most `limit`, returns how many), `store.purge.live`.
 * - scope: `store.scope.isolation` (tenant, principal, operation and key each name the record),
 *   `store.scope.injective` (no two scopes share a record, whatever characters they hold).
 * - through the engine: `store.engine.once`, `store.engine.error-releases`, `store.engine.mismatch`,
 *   `store.engine.policies`; and the fast-check models `store.model.sequences`,
 *   `store.model.interleavings`.
 */
export interface IdempotencyStore {
  /** Adapter name used in errors, e.g. `postgres`. */
  readonly name: string;
  readonly capabilities: StoreCapabilities;
  /**
   * Atomically, in one round trip: claims the record when it is absent, expired, or in progress with
   * a lapsed lease and the same fingerprint (a takeover: fence + 1, retention restarts, createdAt
   * kept); otherwise returns the record as it stands and changes nothing. `store.claim.*`.
   */
  claim(input: ClaimInput): Promise<ClaimResult>;
  /**
   * Stores the outcome if `token` still holds the lease: ends the lease, keeps the outcome for
   * `retentionMs` from now. `store.complete.*`.
   */
  complete(input: CompleteInput): Promise<FenceResult>;
  /** Deletes the in-progress record if `token` still holds the lease, so a retry may execute. `store.release.*`. */
  release(input: LeaseInput): Promise<FenceResult>;
  /**
   * Renews the lease for `leaseMs` from now if `token` still holds it, and stretches retention so it
   * never ends before the lease. `store.extend.*`.
   */
  extend(input: LeaseInput & { readonly leaseMs: number }): Promise<FenceResult>;
  /** Reads a record; expired records are absent. `store.get.*`. */
  get(scope: Scope): Promise<IdempotencyRecord | undefined>;
  /** Deletes up to `limit` expired records (never a live one); returns how many. `store.purge.*`. */
  purgeExpired(limit: number): Promise<number>;
  /** Releases what the store opened itself (never a client the caller passed in). */
  close(): Promise<void>;
}

/** What the engine asks a transactional store to do once the handler has run. */
export type TransactionDecision<T> =
  | {
      readonly action: 'commit';
      readonly state: TerminalState;
      readonly response: StoredResponse;
      readonly retentionMs: number;
      readonly value: T;
    }
  | { readonly action: 'rollback'; readonly value: T };

/** A claim made inside a transaction; `busy` means the lock wait timed out. */
export type TransactionClaim = ClaimResult | { readonly kind: 'busy' };

/**
 * A store whose claim, business writes and saved result commit in one transaction. A concurrent
 * duplicate blocks on the unique key and then sees the committed result; a rollback leaves no trace.
 * It keeps every clause of {@link IdempotencyStore} in lease mode, and these (`tx.*`, tested through
 * `runInTransaction`):
 * - `tx.capability`: `capabilities.transactions` is true exactly when `transaction` exists.
 * - `tx.once`: of concurrent transactions on one key one executes; the others replay its committed result.
 * - `tx.rollback.error`: when `work` throws, nothing is kept and the error reaches the caller unchanged.
 * - `tx.rollback.released`: a `rollback` decision keeps nothing, so the retry executes.
 * - `tx.mismatch`: a different fingerprint on a committed key never executes.
 * - `tx.join`: `join` (optional) claims, runs `work` and saves inside the caller's open transaction
 *   without committing it: an error or a `rollback` decision undoes only the store's part (a
 *   savepoint), leaving the caller's transaction usable, and the caller's commit keeps the record.
 *
 * `Join` is what `join` accepts as the caller's transaction (default `Tx`).
 */
export interface TransactionalStore<Tx, Join = Tx> extends IdempotencyStore {
  readonly capabilities: StoreCapabilities & { readonly transactions: true };
  /**
   * Begins a transaction, claims in it, hands the claim and the transaction to `work`, then commits
   * the decision (saving the outcome with a compare-and-set on the token) or rolls back. When `work`
   * throws, rolls back and rethrows that error unchanged; the store's own failures are StorageErrors.
   */
  transaction<T>(input: ClaimInput, work: (claim: TransactionClaim, tx: Tx) => Promise<TransactionDecision<T>>): Promise<T>;
  /**
   * Like `transaction`, inside the caller's open transaction `tx`: claims, hands the claim and the
   * handler's handle to `work`, saves the decision, and never commits or rolls back `tx` itself.
   * When `work` throws or decides `rollback`, or the claim is `busy`, only the store's part is undone
   * (`tx.join`); the record commits when the caller commits.
   */
  join?<T>(tx: Join, input: ClaimInput, work: (claim: TransactionClaim, tx: Tx) => Promise<TransactionDecision<T>>): Promise<T>;
}

/** The transaction handle type of a transactional store, `never` for others. */
// biome-ignore lint/suspicious/noExplicitAny: only Tx is inferred; the join type may be anything.
export type TransactionOf<S> = S extends TransactionalStore<infer Tx, any> ? Tx : never;

/** What a transactional store's `join` accepts as the caller's open transaction, `never` when it cannot join. */
// biome-ignore lint/suspicious/noExplicitAny: only Join is inferred.
export type JoinOf<S> = S extends TransactionalStore<any, infer Join> ? Join : never;

/** True when `store` declares the `transactions` capability. */
export function isTransactionalStore(store: IdempotencyStore): store is TransactionalStore<unknown> {
  return store.capabilities.transactions && typeof (store as { transaction?: unknown }).transaction === 'function';
}
