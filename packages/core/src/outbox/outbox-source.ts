import type { ClaimedEvent } from './outbox-event.js';

/** Arguments of {@link OutboxSource.claim}. */
export interface OutboxClaimInput {
  /** The claiming relay's id: the lease owner every later compare-and-set names. */
  readonly owner: string;
  /** Most events to claim. */
  readonly limit: number;
  /** How long the claim holds, by the storage server's clock. */
  readonly leaseMs: number;
}

/** One event to try again later, in {@link OutboxSource.reschedule}. */
export interface OutboxRetry {
  readonly eventId: string;
  /** Not claimable again before this many ms from now, by the storage server's clock. */
  readonly delayMs: number;
  /** Why the attempt failed, kept for operators. */
  readonly error: string;
}

/** One event to park, in {@link OutboxSource.deadLetter}. */
export interface OutboxDeadLetter {
  readonly eventId: string;
  /** Why the last attempt failed, kept for operators. */
  readonly error: string;
}

/** Gauges of an outbox, read by the storage server's clock. */
export interface OutboxStats {
  /** Events not yet published, dead letters included. */
  readonly unpublished: number;
  /** Age of the oldest unpublished event in ms; 0 when there is none. */
  readonly oldestUnpublishedAgeMs: number;
  /** Events parked after too many attempts; each still holds back the later events of its aggregate. */
  readonly deadLettered: number;
}

/** A push wake-up (Postgres LISTEN/NOTIFY): tells an idle relay that events were enqueued. */
export interface OutboxWakeUp {
  /**
   * Resolves when an event was enqueued since the previous call (at once if one already was), after
   * `timeoutMs`, or when `signal` aborts; never rejects.
   */
  wait(timeoutMs: number, signal: AbortSignal): Promise<void>;
  /** Stops listening and frees the connection. */
  close(): Promise<void>;
}

/**
 * Where a relay gets its events: the claim half of an outbox, implemented by each adapter. Every
 * method either answers or throws (a `StorageError`); none swallows a failure.
 *
 * The claim is the contract that makes several relays safe at once: a claim takes, per aggregate, its
 * unpublished events from the oldest (by `aggregateSeq`), in order, up to the first that is not due,
 * dead-lettered or leased to another relay whose lease still runs; while any of them is leased, no
 * other relay claims an event of that aggregate. So a hot aggregate drains a batch per claim.
 *
 * Each clause has an id, carried by the test of `runOutboxSourceConformance` that proves it:
 * `outbox-source.enqueue.sequence` (each aggregate is numbered 1, 2, 3… and the payload kept),
 * `outbox-source.claim.oldest` (each aggregate's unpublished events from the oldest, in order, attempt 1),
 * `outbox-source.claim.batch` (a hot aggregate's next events in one claim; no other relay gets any meanwhile),
 * `outbox-source.claim.limit`, `outbox-source.claim.lease` (a leased event is not claimable until its
 * lease lapses; every claim counts an attempt), `outbox-source.fenced` (reschedule, release and dead
 * letter by a relay that lost its lease change nothing), `outbox-source.mark-published` (frees the next
 * event; marking again changes nothing), `outbox-source.reschedule` (ends the lease, holds the event
 * back for its delay), `outbox-source.dead-letter` (never claimed; holds back its own aggregate only),
 * `outbox-source.release` (hands events back unattempted, only for their owner),
 * `outbox-source.stats`, `outbox-source.purge` (published events past the age only, at most `limit`)
 * and `outbox-source.claim.race` (concurrent relays never share an event or an aggregate, and each
 * aggregate goes out in order).
 */
export interface OutboxSource {
  /** Adapter name used in errors, e.g. `postgres`. */
  readonly name: string;
  /**
   * Atomically leases up to `limit` claimable events to `owner` for `leaseMs` and increments their
   * attempt count. Per aggregate, a run of its oldest unpublished events, handed over in
   * `aggregateSeq` order (events of other aggregates may come between them).
   */
  claim(input: OutboxClaimInput): Promise<readonly ClaimedEvent[]>;
  /**
   * Records that the broker acknowledged these events. Not fenced: an acknowledged publish is a fact,
   * whichever relay holds the lease now; an event already marked stays as it is.
   */
  markPublished(eventIds: readonly string[]): Promise<void>;
  /** Ends `owner`'s lease and makes each event claimable after its delay; returns how many it changed (others lost their lease). */
  reschedule(input: { readonly owner: string; readonly retries: readonly OutboxRetry[] }): Promise<number>;
  /** Parks events `owner` still leases: never claimed again until an operator requeues them; returns how many. */
  deadLetter(input: { readonly owner: string; readonly letters: readonly OutboxDeadLetter[] }): Promise<number>;
  /** Ends `owner`'s lease without counting the attempt (graceful stop); returns how many it released. */
  release(input: { readonly owner: string; readonly eventIds: readonly string[] }): Promise<number>;
  /** Reads the outbox gauges. */
  stats(): Promise<OutboxStats>;
  /** Deletes up to `limit` events published more than `olderThanMs` ago; returns how many. */
  purgePublished(input: { readonly olderThanMs: number; readonly limit: number }): Promise<number>;
  /** Optional: opens a push wake-up. Without it, an idle relay polls. */
  subscribe?(): Promise<OutboxWakeUp>;
}
