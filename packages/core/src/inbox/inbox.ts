import { assertIdentifier } from '../outbox/identifier.js';

/** Which consumer is handling which event. */
export interface InboxInput {
  /** The consumer's stable name, e.g. `billing`: each consumer deduplicates on its own. */
  readonly consumer: string;
  /** The event's `eventId`, as the publisher carried it. */
  readonly eventId: string;
}

/** `processed`: this call applied the event. `duplicate`: an earlier delivery already had; nothing ran. */
export type InboxOutcome = 'processed' | 'duplicate';

/** Arguments of {@link Inbox.purgeProcessed}. */
export interface PurgeProcessedInput {
  /** Records made more than this many ms ago, by the storage server's clock, are deleted. */
  readonly olderThanMs: number;
  /** Most records deleted by one call. */
  readonly limit: number;
}

/**
 * An idempotent consumer's inbox (processed-messages table) over the transaction handle `Tx`,
 * implemented by each adapter and verified by `runInboxConformance` in `@oncely/testkit`.
 * Deliveries stay at-least-once; the effect on the state `tx` covers is effectively once. Its clauses:
 *
 * - `inbox.process.new`: `process(tx, input, fn)` records `(consumer, eventId)` in the consumer's
 *   open transaction `tx` and, the pair being new, runs `fn(tx)` and resolves `processed`; the record
 *   and `fn`'s writes commit or roll back together.
 * - `inbox.process.duplicate`: a pair already recorded resolves `duplicate`; `fn` does not run.
 * - `inbox.process.rollback`: when `fn` throws (its error passes through unchanged) or `tx` rolls
 *   back, the record goes too, so a redelivery is processed.
 * - `inbox.process.concurrent`: of concurrent deliveries of one pair in separate transactions,
 *   exactly one is processed; the others resolve `duplicate` once it commits (or are retried by the
 *   database's own conflict handling, as MongoDB's `withTransaction` does).
 * - `inbox.process.per-consumer`: each consumer deduplicates on its own: one `eventId` is processed
 *   once for every consumer.
 * - `inbox.process.validates`: a malformed consumer or event id is refused with
 *   `OncelyError('invalid_event')` before storage is touched; `fn` does not run.
 * - `inbox.process.needs-transaction`: `process` without a transaction handle throws
 *   `OncelyError('invalid_state')`; `fn` does not run.
 * - `inbox.process.reports-duplicates`: every duplicate is reported as an {@link InboxEvent} stamped
 *   by the inbox's clock; a listener that throws changes nothing.
 * - `inbox.run.commits`: `run(input, fn)` is `process` in a transaction of its own, committed when
 *   `fn` resolves.
 * - `inbox.run.rolls-back`: when `fn` throws, `run` rolls back and rethrows `fn`'s error unchanged.
 * - `inbox.purge.bounded`: `purgeProcessed` deletes at most `limit` records made more than
 *   `olderThanMs` ago, keeps the rest and returns how many it deleted; a purged pair counts as new.
 */
export interface Inbox<Tx> {
  /** Applies an event once per consumer inside the transaction `tx`; see the `inbox.process.*` clauses. */
  process(tx: Tx, input: InboxInput, fn: (tx: Tx) => Promise<unknown>): Promise<InboxOutcome>;
  /** {@link Inbox.process} in a transaction of its own: commits when `fn` resolves, rolls back when it throws. */
  run(input: InboxInput, fn: (tx: Tx) => Promise<unknown>): Promise<InboxOutcome>;
  /**
   * Deletes up to `limit` records made more than `olderThanMs` ago; returns how many. Keep records at
   * least as long as an event can be redelivered (relay leases, stream retention, consumer downtime):
   * after that, a late redelivery is applied again.
   */
  purgeProcessed(input: PurgeProcessedInput): Promise<number>;
}

/**
 * What an inbox reports through `onEvent`: a duplicate detected, per consumer (the consumer name is a
 * fine metric label; `eventId` is for logs only). Applied events are not reported here: the commit
 * that makes them count is the caller's.
 */
export interface InboxEvent {
  readonly type: 'inbox_duplicate';
  readonly at: number;
  readonly consumer: string;
  readonly eventId: string;
}

/** Validates an {@link InboxInput} before any storage is touched; throws an `invalid_event` error. */
export function assertInboxInput(input: InboxInput): void {
  assertIdentifier('invalid_event', 'consumer', input?.consumer);
  assertIdentifier('invalid_event', 'eventId', input.eventId);
}
