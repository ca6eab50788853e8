/** A value a journal can store faithfully: it survives a JSON round trip unchanged. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/**
 * Where a logical operation stands. `pending`: begun, attempts may be in flight. `unknown`: the
 * caller stopped without a definitive answer and the effect may have happened (reconcile it).
 * `succeeded` and `failed` are definitive and final.
 */
export type JournalState = 'pending' | 'unknown' | 'succeeded' | 'failed';

/** Fields every journal entry carries. */
export interface JournalEntryBase {
  /** The caller's stable name for one logical operation, e.g. `order-42:charge`. */
  readonly operationId: string;
  /** The idempotency key: generated once at the first `begin`, reused by every attempt. */
  readonly key: string;
  /** Attempts recorded so far, across every process that resumed the operation. */
  readonly attempts: number;
  /** What the caller stored at the first `begin` to retry or reconcile later (e.g. the request). */
  readonly request?: JsonValue;
  readonly createdAt: Date;
  /** Last change (begin, attempt, outcome), by the journal's clock. */
  readonly updatedAt: Date;
}

/** One logical operation as a journal reports it; the state carries its own data. */
export type JournalEntry = JournalEntryBase &
  (
    | { readonly state: 'pending' }
    | { readonly state: 'unknown'; readonly lastError?: string }
    | { readonly state: 'succeeded'; readonly value?: JsonValue }
    | { readonly state: 'failed'; readonly error?: JsonValue }
  );

/** A definitive outcome, as recorded by {@link OperationJournal.complete}. */
export type JournalOutcome =
  | { readonly state: 'succeeded'; readonly value?: JsonValue }
  | { readonly state: 'failed'; readonly error?: JsonValue };

/** Options of {@link OperationJournal.begin}. */
export interface BeginOptions {
  /** Use this key instead of generating one (only on the first `begin`; later ones keep the stored key). */
  readonly key?: string;
  /** Stored with the entry at the first `begin`, never overwritten. */
  readonly request?: JsonValue;
}

/** `started`: this call created the entry. `resumed`: it already existed and is returned as stored. */
export type BeginResult =
  | { readonly kind: 'started'; readonly entry: JournalEntry }
  | { readonly kind: 'resumed'; readonly entry: JournalEntry };

/** Options of {@link OperationJournal.listUnresolved}. */
export interface ListUnresolvedOptions {
  /** A `pending` entry untouched for at least this long is listed as stale. */
  readonly staleAfterMs: number;
  /** At most this many entries, oldest `updatedAt` first (default 100). */
  readonly limit?: number;
}

/** Options of {@link OperationJournal.purgeSettled}. */
export interface PurgeSettledOptions {
  /** Deletes `succeeded` and `failed` entries settled at least this long ago. */
  readonly olderThanMs: number;
  /** At most this many deletions (default 1 000). */
  readonly limit?: number;
}

/**
 * The caller's durable record of its logical operations: the key is generated once and persisted
 * before the first attempt, so every retry (and every process that resumes after a crash) sends the
 * same key, and operations left without a definitive answer can be found and reconciled.
 *
 * Rules every implementation keeps (the journal conformance suite checks them):
 * - `begin` is an atomic insert-or-read: concurrent begins of one id all get the same key.
 * - `succeeded` and `failed` are final: later `complete`, `markUnknown` and `recordAttempt` calls
 *   return the entry unchanged (the first outcome wins).
 * - `recordAttempt` counts atomically and moves an `unknown` entry back to `pending`.
 * - Time (`updatedAt`, staleness, purge age) is the journal's own clock: the server's for servers.
 * - Methods on an id that was never begun throw `OncelyError('operation_not_begun')`; storage
 *   failures throw `StorageError`. Nothing is swallowed.
 */
export interface OperationJournal {
  /** Adapter name used in errors, e.g. `postgres`. */
  readonly name: string;
  /** Creates the entry with a fresh key (state `pending`), or returns the existing one unchanged. */
  begin(operationId: string, options?: BeginOptions): Promise<BeginResult>;
  /** Reads an entry. */
  get(operationId: string): Promise<JournalEntry | undefined>;
  /** Counts one more attempt (before it is sent) and marks the entry `pending`, unless it is final. */
  recordAttempt(operationId: string): Promise<JournalEntry>;
  /** Records a definitive outcome, unless one is already recorded. */
  complete(operationId: string, outcome: JournalOutcome): Promise<JournalEntry>;
  /** Records that the caller gave up without a definitive answer, unless the entry is final. */
  markUnknown(operationId: string, lastError?: string): Promise<JournalEntry>;
  /** Entries to reconcile: every `unknown` one and the `pending` ones gone stale. */
  listUnresolved(options: ListUnresolvedOptions): Promise<JournalEntry[]>;
  /** Deletes old settled entries; returns how many. A purged id begins afresh with a new key. */
  purgeSettled(options: PurgeSettledOptions): Promise<number>;
  /** Releases what the journal opened itself (never a client the caller passed in). */
  close(): Promise<void>;
}
