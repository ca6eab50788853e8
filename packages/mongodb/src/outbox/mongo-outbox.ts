import { OncelyError } from '@oncely/core';
import {
  captureTraceHeaders,
  type ClaimedEvent,
  type NewOutboxEvent,
  type Outbox,
  type OutboxEvent,
  type OutboxSource,
  prepareOutboxEvent,
  type TraceOption,
  toStorageError,
} from '@oncely/core/adapter';
import type { AnyBulkWriteOperation, ClientSession, Collection, Db } from 'mongodb';
import { classifyMongoError } from '../errors/mongo-errors.js';
import { deleteOldest } from '../purge/delete-oldest.js';
import { ADAPTER, PRIMARY, storageCall } from '../store/mongo-store.js';
import { toNumber } from '../store/record-document.js';
import { traceApi } from '../trace/otel-api.js';
import {
  AGGREGATE_INDEXES,
  type AggregateDocument,
  aggregateKey,
  claimFilter,
  claimUpdate,
  deadLetterUpdate,
  ENQUEUE_ORDER_COMMAND,
  enqueueCommand,
  holdAggregateUpdate,
  leaseAggregateCommand,
  leasedAggregateFilter,
  listAggregateCommand,
  markPublishedCommand,
  OUTBOX_INDEXES,
  type OutboxDocument,
  ownedFilter,
  type PendingEvent,
  pendingEventsPipeline,
  publishedBeforeFilter,
  RELEASE_UPDATE,
  requeueCommand,
  rescheduleUpdate,
  type SequenceDocument,
  STATS_PIPELINE,
  sequenceUnchangedCommand,
  UNPUBLISHED_AGGREGATES_PIPELINE,
  wakeAggregateCommand,
} from './outbox-queries.js';

/** Options of {@link mongoOutbox}. */
export interface MongoOutboxOptions {
  readonly db: Db;
  /** Default `oncely_outbox`. */
  readonly collectionName?: string;
  /** The per-aggregate sequence counters and the enqueue-order counter; default `oncely_outbox_sequences`. */
  readonly sequencesCollectionName?: string;
  /** The aggregates a claim leases, one entry per aggregate with unpublished events; default `oncely_outbox_aggregates`. */
  readonly aggregatesCollectionName?: string;
  /**
   * Where `enqueue` reads the active trace context from, into the event's `traceparent`/`tracestate`
   * headers: `@opentelemetry/api` when it is installed (default), another copy of it, or `false`.
   */
  readonly trace?: TraceOption;
}

/** A transactional outbox on MongoDB: the `Outbox` contract of `@oncely/core` over a `ClientSession`. */
export interface MongoOutbox extends Outbox<ClientSession> {
  /**
   * Writes `event` in the caller's open transaction, so it commits or rolls back with the business
   * writes. Assigns `aggregateSeq` from a per-aggregate counter in the same transaction unless the
   * event brings one (which must be higher than every earlier one: `outbox_sequence_conflict`
   * otherwise). An event id already stored is refused with `duplicate_event`; MongoDB then aborts the
   * transaction, so nothing it wrote commits. Lists the aggregate for the claim (a no-op when listed),
   * ordered among equal times by an enqueue order allocated outside the transaction.
   */
  enqueue<P>(tx: ClientSession, event: NewOutboxEvent<P>): Promise<OutboxEvent<P>>;
  readonly collection: Collection<OutboxDocument>;
  /**
   * Creates the outbox and aggregates indexes and lists the aggregate of every unpublished event not
   * listed yet (idempotent): run it once after upgrading from a version without the aggregates collection.
   */
  ensureIndexes(): Promise<void>;
}

const toEvent = <P>(document: OutboxDocument): OutboxEvent<P> => ({
  eventId: document._id,
  aggregateType: document.aggregateType,
  aggregateId: document.aggregateId,
  aggregateSeq: toNumber(document.aggregateSeq),
  eventType: document.eventType,
  payload: JSON.parse(document.payload) as P,
  createdAt: document.createdAt,
  ...(document.headers ? { headers: document.headers } : {}),
});

/** Refuses to write outside a transaction: the outbox is only atomic with the business writes inside one. */
export function assertInTransaction(tx: ClientSession, what: string): void {
  if (typeof tx?.inTransaction !== 'function' || !tx.inTransaction()) {
    throw new OncelyError('invalid_state', `oncely/mongodb: ${what} needs a ClientSession with an open transaction (a replica set or sharded cluster)`);
  }
}

/** Creates the outbox over `db` (its collections need a replica set or sharded cluster for transactions). */
export function mongoOutbox(options: MongoOutboxOptions): MongoOutbox {
  const collection = options.db.collection<OutboxDocument>(options.collectionName ?? 'oncely_outbox');
  const sequences = options.db.collection<SequenceDocument>(options.sequencesCollectionName ?? 'oncely_outbox_sequences');
  const aggregates = options.db.collection<AggregateDocument>(options.aggregatesCollectionName ?? 'oncely_outbox_aggregates');

  async function nextSeq(tx: ClientSession, aggregate: string, given: number | undefined): Promise<number> {
    if (given === undefined) {
      const counter = await sequences.findOneAndUpdate({ _id: aggregate }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: 'after', session: tx });
      return toNumber(counter?.seq);
    }
    try {
      // Matches only when the counter is below the given sequence; otherwise the upsert collides on _id.
      await sequences.updateOne({ _id: aggregate, seq: { $lt: given } }, { $set: { seq: given } }, { upsert: true, session: tx });
      return given;
    } catch (error) {
      if (classifyMongoError(error) !== 'duplicate_key') throw error;
      throw new OncelyError('outbox_sequence_conflict', `oncely/mongodb: aggregateSeq ${given} is not above the sequences already enqueued for ${aggregate}`);
    }
  }

  async function withOwned(operation: 'outbox.reschedule' | 'outbox.deadLetter', owner: string, updates: { eventId: string; update: object[] }[]): Promise<number> {
    if (updates.length === 0) return 0;
    const operations = updates.map(({ eventId, update }) => ({
      updateOne: { filter: ownedFilter(owner, [eventId]), update },
    })) as AnyBulkWriteOperation<OutboxDocument>[];
    return storageCall(operation, () =>
      waking(
        updates.map((update) => update.eventId),
        () => collection.bulkWrite(operations, { ordered: false }),
      ),
    );
  }

  /** Wakes the aggregates of `events`: a relay wrote them, so the next claim looks at them again. */
  async function wake(events: readonly Pick<OutboxDocument, 'aggregateType' | 'aggregateId'>[]): Promise<void> {
    const keys = new Map(events.map((event) => [aggregateKey(event.aggregateType, event.aggregateId), event]));
    if (keys.size === 0) return;
    const operations = [...keys.values()].map((event) => ({ updateOne: wakeAggregateCommand(event.aggregateType, event.aggregateId) }));
    await aggregates.bulkWrite(operations as AnyBulkWriteOperation<AggregateDocument>[], { ordered: false });
  }

  /** A write on `eventIds` that then wakes their aggregates (read first) when it changed any; answers the count. */
  async function waking(eventIds: readonly string[], write: () => Promise<{ matchedCount: number }>): Promise<number> {
    const touched = await collection.find({ _id: { $in: [...eventIds] } }, { projection: { _id: 0, aggregateType: 1, aggregateId: 1 } }).toArray();
    const { matchedCount } = await write();
    if (matchedCount > 0) await wake(touched);
    return matchedCount;
  }

  /**
   * Forgets an aggregate `owner` found empty, unless an enqueue for it is in flight: deletes its entry,
   * then checks its sequence counter is still `seq` (see {@link sequenceUnchangedCommand}); when it moved,
   * the entry is listed again.
   */
  async function forget(key: string, owner: string, seq: number | undefined, aggregate: AggregateDocument): Promise<void> {
    const removed = await aggregates.deleteOne(leasedAggregateFilter(key, owner));
    if (removed.deletedCount === 0) return;
    const check = sequenceUnchangedCommand(key, seq);
    let unchanged: boolean;
    try {
      const result = await sequences.updateOne(check.filter, check.update, check.options);
      unchanged = result.matchedCount > 0 || result.upsertedCount > 0;
    } catch (error) {
      // An enqueue created the counter meanwhile: the aggregate has an event on the way.
      if (classifyMongoError(error) !== 'duplicate_key') throw error;
      unchanged = false;
    }
    if (!unchanged) await wake([aggregate]);
  }

  const source: OutboxSource = {
    name: ADAPTER,
    async claim({ owner, limit, leaseMs }) {
      return storageCall('outbox.claim', async () => {
        const claimed: OutboxDocument[] = [];
        const handBack: OutboxDocument[] = [];
        const leasedAggregates: AggregateDocument[] = [];
        try {
          // Aggregate by aggregate, the one that has waited longest first: at most `limit` visits.
          for (let visit = 0; visit < limit && claimed.length < limit; visit++) {
            const lease = leaseAggregateCommand(owner, leaseMs);
            const aggregate = await aggregates.findOneAndUpdate(lease.filter, lease.update, lease.options);
            if (!aggregate) break;
            leasedAggregates.push(aggregate);
            // Read before the events, both at the primary: forgetting the aggregate is checked against this counter.
            const counter = await sequences.findOne({ _id: aggregate._id }, { projection: { seq: 1 }, ...PRIMARY });
            const pending = await collection
              .aggregate<PendingEvent>(pendingEventsPipeline(aggregate.aggregateType, aggregate.aggregateId, limit - claimed.length), PRIMARY)
              .toArray();
            const blocked = pending.findIndex((event) => event.blockedUntil !== null);
            const run = (blocked === -1 ? pending : pending.slice(0, blocked)).map((event) => event._id);
            if (run.length === 0) {
              if (blocked === -1) await forget(aggregate._id, owner, counter?.seq === undefined ? undefined : toNumber(counter.seq), aggregate);
              else await aggregates.updateOne(leasedAggregateFilter(aggregate._id, owner), holdAggregateUpdate(pending[blocked]!.blockedUntil!));
              continue;
            }
            // Each event is leased by its own compare-and-set: one a relay whose lease on the aggregate
            // lapsed still holds is not, and only a run from the first counts (a later one would go out first).
            const settled = await Promise.allSettled(
              run.map((id) => collection.findOneAndUpdate(claimFilter(id), claimUpdate(owner, leaseMs), { returnDocument: 'after', includeResultMetadata: false })),
            );
            let inRun = true;
            let failure: PromiseRejectedResult | undefined;
            for (const result of settled) {
              if (result.status === 'rejected') failure ??= result;
              if (result.status === 'rejected' || result.value === null) inRun = false;
              else (inRun ? claimed : handBack).push(result.value);
            }
            if (failure) throw failure.reason;
          }
        } catch (error) {
          // A claim that throws keeps nothing: its events go back unattempted and its aggregates are woken.
          const back = [...claimed, ...handBack];
          if (back.length > 0) await collection.updateMany(ownedFilter(owner, back.map((document) => document._id)), RELEASE_UPDATE);
          await wake(leasedAggregates);
          throw error;
        }
        if (handBack.length > 0) await collection.updateMany(ownedFilter(owner, handBack.map((document) => document._id)), RELEASE_UPDATE);
        return claimed.map((document): ClaimedEvent => ({ ...toEvent(document), attempt: toNumber(document.attempts) }));
      });
    },
    async markPublished(eventIds) {
      if (eventIds.length === 0) return;
      const { filter, update } = markPublishedCommand(eventIds);
      await storageCall('outbox.markPublished', () => waking(eventIds, () => collection.updateMany(filter, update)));
    },
    reschedule: ({ owner, retries }) =>
      withOwned('outbox.reschedule', owner, retries.map((retry) => ({ eventId: retry.eventId, update: rescheduleUpdate(retry.delayMs, retry.error) }))),
    deadLetter: ({ owner, letters }) =>
      withOwned('outbox.deadLetter', owner, letters.map((letter) => ({ eventId: letter.eventId, update: deadLetterUpdate(letter.error) }))),
    async release({ owner, eventIds }) {
      if (eventIds.length === 0) return 0;
      return storageCall('outbox.release', () => waking(eventIds, () => collection.updateMany(ownedFilter(owner, eventIds), RELEASE_UPDATE)));
    },
    async stats() {
      const [row] = await storageCall('outbox.stats', () => collection.aggregate(STATS_PIPELINE).toArray());
      return row
        ? { unpublished: toNumber(row.unpublished), deadLettered: toNumber(row.deadLettered), oldestUnpublishedAgeMs: toNumber(row.oldestUnpublishedAgeMs) }
        : { unpublished: 0, deadLettered: 0, oldestUnpublishedAgeMs: 0 };
    },
    purgePublished: ({ olderThanMs, limit }) =>
      storageCall('outbox.purgePublished', () => deleteOldest(collection, publishedBeforeFilter(olderThanMs), 'publishedAt', limit)),
  };

  return {
    collection,
    source,
    async enqueue<P>(tx: ClientSession, event: NewOutboxEvent<P>): Promise<OutboxEvent<P>> {
      const prepared = prepareOutboxEvent(event, captureTraceHeaders(await traceApi(options.trace)));
      assertInTransaction(tx, 'enqueue');
      try {
        const aggregateSeq = await nextSeq(tx, aggregateKey(prepared.aggregateType, prepared.aggregateId), prepared.aggregateSeq);
        const { filter, update, options: commandOptions } = enqueueCommand({
          _id: prepared.eventId,
          aggregateType: prepared.aggregateType,
          aggregateId: prepared.aggregateId,
          aggregateSeq,
          eventType: prepared.eventType,
          payload: prepared.payloadJson,
          ...(prepared.headers ? { headers: prepared.headers } : {}),
        });
        const stored = await collection
          .findOneAndUpdate(filter, update, { ...commandOptions, session: tx })
          // Only this write's duplicate key means a taken event id (the other writes are not on event ids).
          .catch((error: unknown) => Promise.reject(passTransient(error) ?? duplicateEvent(error, prepared.eventId) ?? error));
        if (!stored) throw new Error('enqueue returned no document');
        // Outside the transaction: allocation order, as PostgreSQL's identity column (see ENQUEUE_ORDER_COMMAND).
        const order = await sequences.findOneAndUpdate(ENQUEUE_ORDER_COMMAND.filter, ENQUEUE_ORDER_COMMAND.update, ENQUEUE_ORDER_COMMAND.options);
        const listed = listAggregateCommand(prepared.aggregateType, prepared.aggregateId, toNumber(order?.seq));
        await aggregates.updateOne(listed.filter, listed.update, { ...listed.options, session: tx });
        return toEvent<P>(stored);
      } catch (error) {
        throw passTransient(error) ?? toStorageError(ADAPTER, 'outbox.enqueue', error);
      }
    },
    async requeue(eventIds) {
      if (eventIds.length === 0) return 0;
      const { filter, update } = requeueCommand(eventIds);
      return storageCall('outbox.requeue', () => waking(eventIds, () => collection.updateMany(filter, update)));
    },
    ensureIndexes: () =>
      storageCall('outbox.ensureIndexes', async () => {
        for (const index of OUTBOX_INDEXES) await collection.createIndex(index.key, index.options);
        for (const index of AGGREGATE_INDEXES) await aggregates.createIndex(index.key, index.options);
        // Events enqueued before the aggregates collection existed: list their aggregates (once; a no-op after).
        const unlisted = await collection.aggregate<{ aggregateType: string; aggregateId: string }>(UNPUBLISHED_AGGREGATES_PIPELINE).toArray();
        const operations = unlisted.map(({ aggregateType, aggregateId }) => {
          const { filter, update, options: listOptions } = listAggregateCommand(aggregateType, aggregateId, 0);
          return { updateOne: { filter, update, ...listOptions } };
        });
        if (operations.length > 0) await aggregates.bulkWrite(operations as AnyBulkWriteOperation<AggregateDocument>[], { ordered: false });
      }),
  };
}

/** A duplicate key on the outbox's `_id` means the event id is taken; the transaction is aborted by the server. */
function duplicateEvent(error: unknown, eventId: string): OncelyError | undefined {
  if (classifyMongoError(error) !== 'duplicate_key') return undefined;
  const keyPattern = (error as { keyPattern?: Record<string, unknown> }).keyPattern;
  const onId = keyPattern ? '_id' in keyPattern : /index: _id_ /.test(String((error as Error).message));
  if (!onId) return undefined;
  return new OncelyError('duplicate_event', `oncely/mongodb: an event with the eventId ${eventId.slice(0, 64)} is already in the outbox`, {
    cause: error,
  });
}

/**
 * A transient transaction error (a write conflict with a concurrent transaction) goes back to the
 * caller unchanged: `session.withTransaction` retries the whole transaction on its label.
 */
export function passTransient(error: unknown): unknown {
  const labelled = error as { hasErrorLabel?: (label: string) => boolean };
  return typeof labelled?.hasErrorLabel === 'function' && labelled.hasErrorLabel('TransientTransactionError') ? error : undefined;
}
