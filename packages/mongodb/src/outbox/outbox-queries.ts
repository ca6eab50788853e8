import type { Document } from 'mongodb';

// Every filter and pipeline of the MongoDB outbox. Time is `$$NOW` (the server's clock); caller values
// go through `$literal`.

const NOW = '$$NOW';
const literal = (value: unknown) => ({ $literal: value });
const fromNow = (ms: number) => ({ $add: [NOW, literal(ms)] });
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

/** True when an event may be claimed now: not parked, due, and not leased. */
const claimable = { $and: [{ $eq: [{ $ifNull: ['$deadLetteredAt', null] }, null] }, { $lte: ['$availableAt', NOW] }, { $not: [leased] }] };

/**
 * What a claim may take, in one aggregation: for each aggregate, its unpublished events by
 * `aggregateSeq` up to the first that is dead-lettered, not due or leased (so a dead-lettered head
 * holds its aggregate back), aggregates with the oldest head first, at most `limit` aggregates.
 * Each result is `{ ids }`, the aggregate's claimable event ids in sequence order.
 */
export function claimCandidatesPipeline(limit: number): Document[] {
  return [
    { $match: { publishedAt: null } },
    { $sort: { aggregateType: 1, aggregateId: 1, aggregateSeq: 1 } },
    {
      $group: {
        _id: { type: '$aggregateType', id: '$aggregateId' },
        events: { $push: { _id: '$_id', ok: claimable, createdAt: '$createdAt' } },
      },
    },
    {
      $project: {
        createdAt: { $arrayElemAt: ['$events.createdAt', 0] },
        ids: {
          $reduce: {
            input: '$events',
            initialValue: { open: true, ids: [] },
            in: {
              $cond: [
                { $and: ['$$value.open', '$$this.ok'] },
                { open: true, ids: { $concatArrays: ['$$value.ids', ['$$this._id']] } },
                { open: false, ids: '$$value.ids' },
              ],
            },
          },
        },
      },
    },
    { $match: { 'ids.ids.0': { $exists: true } } },
    { $sort: { createdAt: 1, _id: 1 } },
    { $limit: limit },
    { $project: { _id: 0, ids: '$ids.ids' } },
  ];
}

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

/** Indexes: per-aggregate order (unique), the head scan over unpublished events, and purge by publish time. */
export const OUTBOX_INDEXES = [
  { key: { aggregateType: 1, aggregateId: 1, aggregateSeq: 1 }, options: { name: 'oncely_outbox_aggregate_seq', unique: true } },
  { key: { publishedAt: 1, aggregateType: 1, aggregateId: 1, aggregateSeq: 1 }, options: { name: 'oncely_outbox_unpublished' } },
] as const;
