import type { NewOutboxEvent, OutboxEvent } from './outbox-event.js';
import type { OutboxSource } from './outbox-source.js';

/**
 * The writer side of a transactional outbox over the transaction handle `Tx` (a `pg` client in a
 * transaction, a MongoDB `ClientSession`), implemented by each adapter and verified by
 * `runOutboxConformance` in `@oncely/testkit`. Its clauses:
 *
 * - `outbox.enqueue.in-transaction`: `enqueue(tx, event)` writes in the caller's open transaction
 *   `tx`, so the event commits or rolls back with the caller's own writes; until `tx` commits, no
 *   relay can claim it.
 * - `outbox.enqueue.rollback`: a transaction that rolls back leaves no event and consumes no
 *   sequence: the aggregate's next event gets the number the rolled-back one had.
 * - `outbox.enqueue.returns`: resolves the event as stored: the given `eventId` (or a random UUID),
 *   its `aggregateSeq`, a JSON copy of the payload and `createdAt` by the outbox's clock, all equal to
 *   what a relay later claims.
 * - `outbox.enqueue.sequence`: without an `aggregateSeq`, the events of an aggregate are numbered
 *   1, 2, 3…; each aggregate counts on its own.
 * - `outbox.enqueue.sequence-order`: while a transaction that enqueued sequence `n` of an aggregate
 *   is open, no other transaction commits a later event of that aggregate, so a relay never sees
 *   `n + 1` before `n`; concurrent enqueues of one aggregate get distinct sequences.
 * - `outbox.enqueue.explicit-sequence`: a caller's `aggregateSeq` above every one enqueued for the
 *   aggregate is kept, and later events without one continue from it.
 * - `outbox.enqueue.sequence-conflict`: a caller's `aggregateSeq` not above the aggregate's last is
 *   refused with `OncelyError('outbox_sequence_conflict')`; nothing is written.
 * - `outbox.enqueue.duplicate`: an `eventId` already in the outbox (committed, or enqueued earlier in
 *   the same transaction) is refused with `OncelyError('duplicate_event')`; the stored event stays
 *   as it is. The caller's transaction is then aborted by the database (PostgreSQL and MongoDB both
 *   abort on a unique-key violation): roll it back, and nothing it wrote commits.
 * - `outbox.enqueue.validates`: a malformed event is refused with `OncelyError('invalid_event')`
 *   before storage is touched, so the transaction stays usable.
 * - `outbox.enqueue.needs-transaction`: `enqueue` without a transaction handle throws
 *   `OncelyError('invalid_state')` and writes nothing.
 * - `outbox.requeue.dead-letters`: `requeue(eventIds)` makes those dead-lettered events claimable
 *   again, counting attempts from 1, and returns how many it changed.
 * - `outbox.requeue.only-dead-letters`: ids of events that are pending, leased, published or absent
 *   change nothing and are not counted.
 *
 * Why a duplicate `eventId` is refused rather than accepted as a no-op: the event id is the identity
 * every consumer's inbox deduplicates by. Two enqueues with one id are either the retry of a
 * transaction that already committed (the caller learns that it did, and its other writes do not
 * commit a second time) or two different events sharing an id, which downstream would silently drop
 * one of; a no-op could not tell them apart. A purged event's id (see `purgePublished`) is free again.
 */
export interface Outbox<Tx> {
  /** Writes `event` in the caller's open transaction `tx`; see the `outbox.enqueue.*` clauses. */
  enqueue<P>(tx: Tx, event: NewOutboxEvent<P>): Promise<OutboxEvent<P>>;
  /** What relays claim from: `createRelay({ source: outbox.source, publisher })`. */
  readonly source: OutboxSource;
  /** Makes dead-lettered events claimable again with a fresh attempt count; returns how many it changed. */
  requeue(eventIds: readonly string[]): Promise<number>;
}
