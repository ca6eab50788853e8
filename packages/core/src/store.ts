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

/** A record as a store reports it. Expired records are never reported: they are absent. */
export interface IdempotencyRecord {
  readonly scope: Scope;
  readonly fingerprint: string;
  readonly state: RecordState;
  /** Fencing counter: 1 for the first owner, +1 at every lease takeover. */
  readonly fence: number;
  /** Terminal records only. */
  readonly response?: StoredResponse;
  /** In-progress records only: how long the current lease still runs, by the store's clock. */
  readonly leaseRemainingMs?: number;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

/** Arguments of {@link IdempotencyStore.claim}. */
export interface ClaimInput {
  readonly scope: Scope;
  readonly fingerprint: string;
  /** Opaque lease token chosen by the engine; every later compare-and-set names it. */
  readonly token: string;
  readonly leaseMs: number;
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
}

/**
 * The storage contract every adapter implements and `@oncely/testkit` verifies.
 * Every method either answers or throws a `StorageError`; none swallows a failure.
 */
export interface IdempotencyStore {
  /** Adapter name used in errors, e.g. `postgres`. */
  readonly name: string;
  readonly capabilities: StoreCapabilities;
  /**
   * Atomically, in one round trip: claims the record when it is absent, expired, or in progress with
   * a lapsed lease and the same fingerprint (a takeover increments the fence and resets retention);
   * otherwise returns the record as it stands.
   */
  claim(input: ClaimInput): Promise<ClaimResult>;
  /** Stores the outcome if `token` still holds the lease. */
  complete(input: CompleteInput): Promise<FenceResult>;
  /** Deletes the in-progress record if `token` still holds the lease, so a retry may execute. */
  release(input: LeaseInput): Promise<FenceResult>;
  /** Renews the lease for `leaseMs` from now if `token` still holds it. */
  extend(input: LeaseInput & { readonly leaseMs: number }): Promise<FenceResult>;
  /** Reads a record; expired records are absent. */
  get(scope: Scope): Promise<IdempotencyRecord | undefined>;
  /** Deletes up to `limit` expired records; returns how many. */
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
 */
export interface TransactionalStore<Tx> extends IdempotencyStore {
  readonly capabilities: StoreCapabilities & { readonly transactions: true };
  /**
   * Begins a transaction, claims in it, hands the claim and the transaction to `work`, then commits
   * the decision (saving the outcome with a compare-and-set on the token) or rolls back. When `work`
   * throws, rolls back and rethrows that error unchanged; the store's own failures are StorageErrors.
   */
  transaction<T>(input: ClaimInput, work: (claim: TransactionClaim, tx: Tx) => Promise<TransactionDecision<T>>): Promise<T>;
}

/** The transaction handle type of a transactional store, `never` for others. */
export type TransactionOf<S> = S extends TransactionalStore<infer Tx> ? Tx : never;

/** True when `store` declares the `transactions` capability. */
export function isTransactionalStore(store: IdempotencyStore): store is TransactionalStore<unknown> {
  return store.capabilities.transactions && typeof (store as { transaction?: unknown }).transaction === 'function';
}
