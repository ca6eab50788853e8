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
import { ADAPTER, storageCall } from '../store/mongo-store.js';
import { toNumber } from '../store/record-document.js';
import { traceApi } from '../trace/otel-api.js';
import {
  claimCandidatesPipeline,
  claimFilter,
  claimUpdate,
  deadLetterUpdate,
  enqueueCommand,
  markPublishedCommand,
  OUTBOX_INDEXES,
  type OutboxDocument,
  ownedFilter,
  publishedBeforeFilter,
  RELEASE_UPDATE,
  requeueCommand,
  rescheduleUpdate,
  type SequenceDocument,
  STATS_PIPELINE,
} from './outbox-queries.js';

/** Options of {@link mongoOutbox}. */
export interface MongoOutboxOptions {
  readonly db: Db;
  /** Default `oncely_outbox`. */
  readonly collectionName?: string;
  /** The per-aggregate sequence counters; default `oncely_outbox_sequences`. */
  readonly sequencesCollectionName?: string;
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
   * transaction, so nothing it wrote commits.
   */
  enqueue<P>(tx: ClientSession, event: NewOutboxEvent<P>): Promise<OutboxEvent<P>>;
  readonly collection: Collection<OutboxDocument>;
  /** Creates the outbox indexes (idempotent). */
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
    const result = await storageCall(operation, () => collection.bulkWrite(operations, { ordered: false }));
    return result.matchedCount;
  }

  const source: OutboxSource = {
    name: ADAPTER,
    async claim({ owner, limit, leaseMs }) {
      return storageCall('outbox.claim', async () => {
        const candidates = await collection.aggregate<{ ids: string[] }>(claimCandidatesPipeline(limit)).toArray();
        // Whole aggregates, oldest head first; the last one cut at the limit.
        const wanted: string[][] = [];
        let room = limit;
        for (const { ids } of candidates) {
          if (room <= 0) break;
          wanted.push(ids.slice(0, room));
          room -= Math.min(ids.length, room);
        }
        // Each event is leased by its own compare-and-set: a relay that lost the race gets null and moves on.
        const settled = await Promise.allSettled(
          wanted
            .flat()
            .map((id) =>
              collection.findOneAndUpdate(claimFilter(id), claimUpdate(owner, leaseMs), { returnDocument: 'after', includeResultMetadata: false }),
            ),
        );
        // Per aggregate only a run from its first event counts: one leased after an event this relay did
        // not get would go out before it, so it is handed back with the rest.
        const claimed: OutboxDocument[] = [];
        const handBack: OutboxDocument[] = [];
        let failed: PromiseRejectedResult | undefined;
        let index = 0;
        for (const ids of wanted) {
          let run = true;
          for (let i = 0; i < ids.length; i++) {
            const result = settled[index++]!;
            if (result.status === 'rejected') failed ??= result;
            if (result.status === 'rejected' || result.value === null) run = false;
            else (run ? claimed : handBack).push(result.value);
          }
        }
        // A claim that throws must not keep what it leased: everything goes back unattempted, then it fails.
        const back = failed ? [...claimed, ...handBack] : handBack;
        if (back.length > 0) await collection.updateMany(ownedFilter(owner, back.map((document) => document._id)), RELEASE_UPDATE);
        if (failed) throw failed.reason;
        return claimed.map((document): ClaimedEvent => ({ ...toEvent(document), attempt: toNumber(document.attempts) }));
      });
    },
    async markPublished(eventIds) {
      if (eventIds.length === 0) return;
      const { filter, update } = markPublishedCommand(eventIds);
      await storageCall('outbox.markPublished', () => collection.updateMany(filter, update));
    },
    reschedule: ({ owner, retries }) =>
      withOwned('outbox.reschedule', owner, retries.map((retry) => ({ eventId: retry.eventId, update: rescheduleUpdate(retry.delayMs, retry.error) }))),
    deadLetter: ({ owner, letters }) =>
      withOwned('outbox.deadLetter', owner, letters.map((letter) => ({ eventId: letter.eventId, update: deadLetterUpdate(letter.error) }))),
    async release({ owner, eventIds }) {
      if (eventIds.length === 0) return 0;
      const result = await storageCall('outbox.release', () => collection.updateMany(ownedFilter(owner, eventIds), RELEASE_UPDATE));
      return result.matchedCount;
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
        const aggregate = JSON.stringify([prepared.aggregateType, prepared.aggregateId]);
        const aggregateSeq = await nextSeq(tx, aggregate, prepared.aggregateSeq);
        const { filter, update, options: commandOptions } = enqueueCommand({
          _id: prepared.eventId,
          aggregateType: prepared.aggregateType,
          aggregateId: prepared.aggregateId,
          aggregateSeq,
          eventType: prepared.eventType,
          payload: prepared.payloadJson,
          ...(prepared.headers ? { headers: prepared.headers } : {}),
        });
        const stored = await collection.findOneAndUpdate(filter, update, { ...commandOptions, session: tx });
        if (!stored) throw new Error('enqueue returned no document');
        return toEvent<P>(stored);
      } catch (error) {
        throw passTransient(error) ?? duplicateEvent(error, prepared.eventId) ?? toStorageError(ADAPTER, 'outbox.enqueue', error);
      }
    },
    async requeue(eventIds) {
      if (eventIds.length === 0) return 0;
      const { filter, update } = requeueCommand(eventIds);
      return (await storageCall('outbox.requeue', () => collection.updateMany(filter, update))).matchedCount;
    },
    ensureIndexes: () =>
      storageCall('outbox.ensureIndexes', async () => {
        for (const index of OUTBOX_INDEXES) await collection.createIndex(index.key, index.options);
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
