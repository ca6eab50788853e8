import type { Document } from 'mongodb';
import { branch } from '../store/queries.js';
import { fromNow, literal, NOW } from '../expressions/server-time.js';

// Every filter and pipeline of the MongoDB outbox. Time is `$$NOW` (the server's clock); caller values
// go through `$literal`.

/** True while the event's lease runs by the server clock (false when it has none). */
const leased = { $gt: ['$leaseExpiresAt', NOW] };
const LEASE_FIELDS = ['leaseOwner', 'leaseExpiresAt'];

/** One outbox event as it sits in the collection. */
export interface OutboxDocument {
  /** The event id. */
  readonly _id: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  readonly aggregateSeq: number;
  readonly eventType: string;
  /** The payload as canonical JSON text. */
  readonly payload: string;
  /** Message headers (the trace context captured at enqueue); absent when there are none. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly createdAt: Date;
  /** `null` until the broker acknowledged the event. */
  readonly publishedAt: Date | null;
  /** `null` unless the event was parked after too many attempts. */
  readonly deadLetteredAt: Date | null;
  /** Claims so far, counting one whose relay died before it reported back. */
  readonly attempts: number;
  /** Not claimable before this time. */
  readonly availableAt: Date;
  readonly leaseOwner?: string;
  readonly leaseExpiresAt?: Date;
  readonly lastError?: string;
}

/** The per-aggregate counter that hands out `aggregateSeq` inside the enqueuing transaction. */
export interface SequenceDocument {
  /** JSON `[aggregateType, aggregateId]`. */
  readonly _id: string;
  readonly seq: number;
}

/**
 * Writes a new event with server times. The filter never matches a stored event (every one has a
 * `createdAt`), so an event id already in the collection makes the upsert's insert collide on `_id`:
 * a duplicate-key error, which the enqueue reports as `duplicate_event`.
 */
export function enqueueCommand(event: Omit<OutboxDocument, 'createdAt' | 'publishedAt' | 'deadLetteredAt' | 'attempts' | 'availableAt'>) {
  const { _id, ...fields } = event;
  const fresh = {
    _id: '$_id',
    ...Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, literal(value)])),
    createdAt: NOW,
    publishedAt: null,
    deadLetteredAt: null,
    attempts: literal(0),
    availableAt: NOW,
  };
  return {
    filter: { _id, createdAt: { $exists: false } },
    update: [{ $replaceWith: fresh }],
    options: { upsert: true, returnDocument: 'after', includeResultMetadata: false } as const,
  };
}

/** The per-aggregate claim state: an aggregate that may have unpublished events, and when it is claimable. */
export interface AggregateDocument {
  /** JSON `[aggregateType, aggregateId]`, as in the sequences collection. */
  readonly _id: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  /**
   * Not claimed before this instant (server clock): a relay's lease, the head event's backoff or
   * lease, or {@link HELD_BACK} while a dead letter heads the aggregate. Every relay write on its
   * events resets it to now, so aggregates take turns in the order they became ready.
   */
  readonly claimableAt: Date;
  /** Breaks ties between equal `claimableAt`s: the enqueue order of the event that listed the aggregate. */
  readonly order: number;
  /** The relay whose lease `claimableAt` is, for operators. */
  readonly leaseOwner?: string;
}

/** The key of an aggregate in the sequences and aggregates collections. */
export const aggregateKey = (aggregateType: string, aggregateId: string) => JSON.stringify([aggregateType, aggregateId]);

/** `claimableAt` of an aggregate held back by a dead letter until a requeue: the latest BSON date. */
export const HELD_BACK = new Date(8_640_000_000_000_000);

/**
 * The enqueue-order counter, a document of the sequences collection (aggregate keys are JSON arrays,
 * so this id never collides with one). It is incremented outside the caller's transaction: inside it,
 * every concurrent enqueue would conflict on this one document and abort.
 */
export const ENQUEUE_ORDER_COMMAND = {
  filter: { _id: 'oncely:enqueue-order' },
  update: { $inc: { seq: 1 } },
  options: { upsert: true, returnDocument: 'after', includeResultMetadata: false },
} as const;

/**
 * Lists the aggregate as claimable from now, unless it is listed already. For a listed aggregate every
 * field keeps its value, so the update changes nothing and writes nothing: the enqueuing transaction
 * never conflicts with the relays that lease the aggregate.
 */
export function listAggregateCommand(aggregateType: string, aggregateId: string, order: number) {
  return {
    filter: { _id: aggregateKey(aggregateType, aggregateId) },
    update: [
      {
        $set: {
          aggregateType: { $ifNull: ['$aggregateType', literal(aggregateType)] },
          aggregateId: { $ifNull: ['$aggregateId', literal(aggregateId)] },
          claimableAt: { $ifNull: ['$claimableAt', NOW] },
          order: { $ifNull: ['$order', literal(order)] },
        },
      },
    ],
    options: { upsert: true },
  };
}

/**
 * Makes the aggregate claimable now and ends any relay's lease on it (listing it first when it is not:
 * events that predate the aggregates collection, or an aggregate forgotten in a race with an enqueue).
 */
export function wakeAggregateCommand(aggregateType: string, aggregateId: string) {
  return {
    filter: { _id: aggregateKey(aggregateType, aggregateId) },
    update: [
      {
        $set: {
          aggregateType: literal(aggregateType),
          aggregateId: literal(aggregateId),
          claimableAt: NOW,
          order: { $ifNull: ['$order', literal(0)] },
        },
      },
      { $unset: 'leaseOwner' },
    ],
    upsert: true,
  };
}

/**
 * Leases the aggregate that has waited longest to `owner` for `leaseMs`: one `findOneAndUpdate` down
 * the `(claimableAt, order)` index, so it reads one entry whatever the backlog.
 */
export function leaseAggregateCommand(owner: string, leaseMs: number) {
  return {
    filter: { $expr: { $lte: ['$claimableAt', NOW] } },
    update: [{ $set: { claimableAt: fromNow(leaseMs), leaseOwner: literal(owner) } }],
    options: { sort: { claimableAt: 1, order: 1 }, returnDocument: 'after', includeResultMetadata: false },
  } as const;
}

/** The aggregate as `owner` leased it. */
export const leasedAggregateFilter = (key: string, owner: string): Document => ({ _id: key, leaseOwner: owner });

/** Ends `owner`'s lease and holds the aggregate back until `until`. */
export const holdAggregateUpdate = (until: Date): Document[] => [{ $set: { claimableAt: literal(until) } }, { $unset: 'leaseOwner' }];

/**
 * The check that makes forgetting an empty aggregate safe: a write on its sequence counter, matched only
 * while the counter is still `seq`. An enqueue in flight has written the counter in its transaction, so
 * this write waits for it to end and then fails to match (or the enqueue conflicts and retries, and
 * then finds the aggregate unlisted and lists it again).
 */
export function sequenceUnchangedCommand(key: string, seq: number | undefined) {
  return {
    filter: seq === undefined ? { _id: key, seq: { $exists: false } } : { _id: key, seq },
    update: [{ $set: { checkedAt: NOW } }],
    options: { upsert: seq === undefined },
  };
}

/** What a claim learns of an aggregate's next event: `blockedUntil` is `null` when it may be claimed now. */
export interface PendingEvent {
  readonly _id: string;
  readonly blockedUntil: Date | null;
}

/**
 * The aggregate's next `limit` unpublished events in `aggregateSeq` order, read down the
 * `(publishedAt, aggregateType, aggregateId, aggregateSeq)` index, each with when it may be claimed on
 * the server clock: never while dead-lettered ({@link HELD_BACK}), at `availableAt` while not due, at
 * `leaseExpiresAt` while another relay holds it.
 */
export function pendingEventsPipeline(aggregateType: string, aggregateId: string, limit: number): Document[] {
  return [
    { $match: { publishedAt: null, aggregateType, aggregateId } },
    { $sort: { aggregateSeq: 1 } },
    { $limit: limit },
    {
      $project: {
        _id: 1,
        blockedUntil: {
          $switch: {
            branches: [
              branch({ $ne: [{ $ifNull: ['$deadLetteredAt', null] }, null] }, literal(HELD_BACK)),
              branch({ $gt: ['$availableAt', NOW] }, '$availableAt'),
              branch(leased, '$leaseExpiresAt'),
            ],
            default: null,
          },
        },
      },
    },
  ];
}

/** Every aggregate with unpublished events: what `ensureIndexes` lists for events that predate the aggregates collection. */
export const UNPUBLISHED_AGGREGATES_PIPELINE: Document[] = [
  { $match: { publishedAt: null } },
  { $group: { _id: { aggregateType: '$aggregateType', aggregateId: '$aggregateId' } } },
  { $project: { _id: 0, aggregateType: '$_id.aggregateType', aggregateId: '$_id.aggregateId' } },
];

/** Compare-and-set claim of one head: still unpublished, not parked, due and not leased. */
export function claimFilter(eventId: string): Document {
  return { _id: eventId, publishedAt: null, deadLetteredAt: null, $expr: { $and: [{ $lte: ['$availableAt', NOW] }, { $not: [leased] }] } };
}

/** Leases the event to `owner` and counts the attempt. */
export function claimUpdate(owner: string, leaseMs: number): Document[] {
  return [{ $set: { leaseOwner: literal(owner), leaseExpiresAt: fromNow(leaseMs), attempts: { $add: ['$attempts', literal(1)] } } }];
}

/** Events still leased to `owner` and not yet published. */
export function ownedFilter(owner: string, eventIds: readonly string[]): Document {
  return { _id: { $in: [...eventIds] }, leaseOwner: owner, publishedAt: null };
}

/** The broker acknowledged: publish time set, lease gone. Not fenced; a published event stays as it is. */
export function markPublishedCommand(eventIds: readonly string[]): { filter: Document; update: Document[] } {
  return { filter: { _id: { $in: [...eventIds] }, publishedAt: null }, update: [{ $set: { publishedAt: NOW } }, { $unset: LEASE_FIELDS }] };
}

/** Try again after `delayMs`; the lease ends. */
export function rescheduleUpdate(delayMs: number, error: string): Document[] {
  return [{ $set: { availableAt: fromNow(delayMs), lastError: literal(error) } }, { $unset: LEASE_FIELDS }];
}

/** Park the event; the lease ends. */
export function deadLetterUpdate(error: string): Document[] {
  return [{ $set: { deadLetteredAt: NOW, lastError: literal(error) } }, { $unset: LEASE_FIELDS }];
}

/** Give the event back without counting the attempt (graceful stop). */
export const RELEASE_UPDATE: Document[] = [{ $set: { attempts: { $max: [0, { $subtract: ['$attempts', 1] }] } } }, { $unset: LEASE_FIELDS }];

/** The outbox gauges on the server clock: one document, or none when nothing is unpublished. */
export const STATS_PIPELINE: Document[] = [
  { $match: { publishedAt: null } },
  {
    $group: {
      _id: null,
      unpublished: { $sum: 1 },
      deadLettered: { $sum: { $cond: [{ $eq: [{ $ifNull: ['$deadLetteredAt', null] }, null] }, 0, 1] } },
      oldest: { $min: '$createdAt' },
    },
  },
  { $project: { _id: 0, unpublished: 1, deadLettered: 1, oldestUnpublishedAgeMs: { $max: [0, { $subtract: [NOW, '$oldest'] }] } } },
];

/** Dead letters among `eventIds` that are still unpublished: claimable again, attempts counted from 1. */
export function requeueCommand(eventIds: readonly string[]): { filter: Document; update: Document[] } {
  return {
    filter: { _id: { $in: [...eventIds] }, deadLetteredAt: { $ne: null }, publishedAt: null },
    update: [{ $set: { deadLetteredAt: null, attempts: literal(0), availableAt: NOW } }],
  };
}

/** Events published at least `olderThanMs` ago. */
export function publishedBeforeFilter(olderThanMs: number): Document {
  return { publishedAt: { $ne: null }, $expr: { $lte: ['$publishedAt', { $subtract: [NOW, literal(olderThanMs)] }] } };
}

/** Indexes: per-aggregate order (unique), and each aggregate's unpublished events in order (the claim's read). */
export const OUTBOX_INDEXES = [
  { key: { aggregateType: 1, aggregateId: 1, aggregateSeq: 1 }, options: { name: 'oncely_outbox_aggregate_seq', unique: true } },
  { key: { publishedAt: 1, aggregateType: 1, aggregateId: 1, aggregateSeq: 1 }, options: { name: 'oncely_outbox_unpublished' } },
] as const;

/** The claim takes the aggregate that has waited longest, ties by enqueue order. */
export const AGGREGATE_INDEXES = [{ key: { claimableAt: 1, order: 1 }, options: { name: 'oncely_outbox_aggregates_claimable' } }] as const;
