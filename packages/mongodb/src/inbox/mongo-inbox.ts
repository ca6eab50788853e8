import { type Clock, type EventListener, systemClock } from '@oncely/core';
import {
  assertInboxInput,
  eventEmitter,
  type Inbox,
  type InboxEvent,
  type InboxInput,
  type InboxOutcome,
  storageTransaction,
  toStorageError,
} from '@oncely/core/adapter';
import type { ClientSession, Collection, Db, Document, MongoClient, TransactionOptions } from 'mongodb';
import { assertInTransaction, passTransient } from '../outbox/mongo-outbox.js';
import { deleteOldest } from '../purge/delete-oldest.js';
import { ADAPTER, storageCall } from '../store/mongo-store.js';
import { DEFAULT_TRANSACTION_OPTIONS } from '../store/transactional-store.js';
import { literal, NOW } from '../expressions/server-time.js';

/** One processed `(consumer, eventId)` pair. */
export interface InboxDocument {
  /** JSON `[consumer, eventId]`: injective, like the idempotency `_id`. */
  readonly _id: string;
  readonly processedAt: Date;
}

/** Options of {@link mongoInbox}: a database (collection `collectionName`, default `oncely_inbox`) or a collection. */
export type MongoInboxOptions = ({ readonly db: Db; readonly collectionName?: string } | { readonly collection: Collection<InboxDocument> }) & {
  /** Told about every duplicate detected, per consumer. */
  readonly onEvent?: EventListener<InboxEvent>;
  /** Stamps the events (default the system clock); record ages are judged by the server's clock. */
  readonly clock?: Clock;
  /** Read and write concern of the transactions `run` opens. Default: snapshot reads, majority writes. */
  readonly transactionOptions?: TransactionOptions;
};

/** The MongoDB inbox: the `Inbox` contract of `@oncely/core` over a `ClientSession`. */
export interface MongoInbox extends Inbox<ClientSession> {
  readonly collection: Collection<InboxDocument>;
  /** Creates the `processedAt` index that `purgeProcessed` walks (idempotent). */
  ensureIndexes(): Promise<void>;
}

/** The `_id` of a processed pair. */
export function inboxId(input: InboxInput): string {
  return JSON.stringify([input.consumer, input.eventId]);
}

/** Records the pair if new (server time), in one upsert; `upsertedCount` says whether it was new. */
export const INBOX_UPDATE = [{ $set: { processedAt: { $ifNull: ['$processedAt', NOW] } } }];

/** Records made at least `olderThanMs` ago by the server's clock. */
export function processedBeforeFilter(olderThanMs: number): Document {
  return { $expr: { $lte: ['$processedAt', { $subtract: [NOW, literal(olderThanMs)] }] } };
}

/** The index `purgeProcessed` walks, oldest first. */
export const INBOX_INDEX = { key: { processedAt: 1 }, options: { name: 'oncely_inbox_processed_at' } } as const;

/**
 * Creates the inbox. `process` records `(consumer, eventId)` first in the caller's open transaction and
 * runs `fn` only when the pair is new; both commit or roll back together. A concurrent duplicate in
 * another transaction makes MongoDB raise a write conflict, which is passed on unchanged so that
 * `session.withTransaction` retries, and the retry resolves `duplicate`. `run` does exactly that in a
 * transaction of its own.
 */
export function mongoInbox(options: MongoInboxOptions): MongoInbox {
  const collection = 'collection' in options ? options.collection : options.db.collection<InboxDocument>(options.collectionName ?? 'oncely_inbox');
  const emit = eventEmitter<InboxEvent>(options.onEvent, options.clock ?? systemClock);
  const transactionOptions = options.transactionOptions ?? DEFAULT_TRANSACTION_OPTIONS;

  async function process(tx: ClientSession, input: InboxInput, fn: (tx: ClientSession) => Promise<unknown>): Promise<InboxOutcome> {
    assertInboxInput(input);
    assertInTransaction(tx, 'inbox.process');
    let inserted: boolean;
    try {
      const result = await collection.updateOne({ _id: inboxId(input) }, INBOX_UPDATE, { upsert: true, session: tx });
      inserted = result.upsertedCount === 1;
    } catch (error) {
      throw passTransient(error) ?? toStorageError(ADAPTER, 'inbox.process', error);
    }
    if (!inserted) {
      emit({ type: 'inbox_duplicate', consumer: input.consumer, eventId: input.eventId });
      return 'duplicate';
    }
    await fn(tx);
    return 'processed';
  }

  return {
    collection,
    process,
    async run(input, fn) {
      assertInboxInput(input);
      const client: MongoClient = collection.db.client;
      // fn's own errors pass through untouched; starting or committing the transaction failing is a storage failure.
      const open = (work: (tx: ClientSession) => Promise<InboxOutcome>) =>
        client.withSession((session) => session.withTransaction(work, transactionOptions));
      return storageTransaction(ADAPTER, 'inbox.run', open, (tx) => process(tx, input, fn));
    },
    purgeProcessed: ({ olderThanMs, limit }) =>
      storageCall('inbox.purgeProcessed', () => deleteOldest(collection, processedBeforeFilter(olderThanMs), 'processedAt', limit)),
    ensureIndexes: () =>
      storageCall('inbox.ensureIndexes', async () => {
        await collection.createIndex(INBOX_INDEX.key, INBOX_INDEX.options);
      }),
  };
}
