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
 * Rules every implementation keeps; each has an id, and the test of `runJournalConformance` that
 * proves it carries the id in its name (the testkit README has the table):
 * - `journal.begin.insert-or-read`: the first `begin` persists a fresh key (1–255 visible ASCII
 *   characters) in state `pending` with 0 attempts; later begins return the entry unchanged (key and
 *   request kept). `journal.begin.explicit-key`: a key given to the first begin is the one stored.
 * - `journal.begin.atomic`: concurrent begins of one id all get the same key, and exactly one is
 *   `started`. `journal.begin.distinct`: different ids get different keys.
 *   `journal.begin.durable`: the key survives a new client over the same storage.
 * - `journal.attempt.atomic`: `recordAttempt` counts atomically. `journal.unknown.resumes`: an
 *   `unknown` entry keeps its last error until an attempt moves it back to `pending`.
 * - `journal.outcome.first-wins`: `succeeded` and `failed` are final: later `complete`,
 *   `markUnknown` and `recordAttempt` calls return the entry unchanged. `journal.outcome.failure`:
 *   a failure keeps its error.
 * - `journal.times`: time (`updatedAt`, staleness, purge age) is the journal's own clock, the
 *   server's for servers; `updatedAt` moves with every change, `createdAt` never.
 * - `journal.list.unresolved`: `unknown` entries are listed at once, `pending` ones once stale,
 *   settled ones never; `journal.list.order`: oldest `updatedAt` first, at most `limit`.
 * - `journal.purge.settled`: purge deletes settled entries old enough and nothing else, and a purged
 *   id begins afresh with a new key; `journal.purge.limit`: at most `limit`.
 * - `journal.input.validated`: bad ids, keys, requests and options are refused with their codes
 *   before storage. `journal.not-begun`: methods on an id that was never begun throw
 *   `OncelyError('operation_not_begun')` and create nothing.
 * - `journal.model`: any sequence of calls leaves the entry where the state machine says.
 * - Storage failures throw `StorageError`. Nothing is swallowed.
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
