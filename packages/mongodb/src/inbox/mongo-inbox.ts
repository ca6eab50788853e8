import { assertInboxInput, type Inbox, type InboxInput, type InboxOutcome, toStorageError } from '@oncely/core';
import type { ClientSession, Collection, Db } from 'mongodb';
import { assertInTransaction, passTransient } from '../outbox/mongo-outbox.js';
import { ADAPTER } from '../store/mongo-store.js';

/** One processed `(consumer, eventId)` pair. */
export interface InboxDocument {
  /** JSON `[consumer, eventId]`: injective, like the idempotency `_id`. */
  readonly _id: string;
  readonly processedAt: Date;
}

/** Options of {@link mongoInbox}: a database (collection `collectionName`, default `oncely_inbox`) or a collection. */
export type MongoInboxOptions = { readonly db: Db; readonly collectionName?: string } | { readonly collection: Collection<InboxDocument> };

/** The MongoDB inbox: `process(tx, { consumer, eventId }, fn)` inside the consumer's transaction. */
export interface MongoInbox extends Inbox<ClientSession> {
  readonly collection: Collection<InboxDocument>;
}

/** The `_id` of a processed pair. */
export function inboxId(input: InboxInput): string {
  return JSON.stringify([input.consumer, input.eventId]);
}

/** Records the pair if new (server time), in one upsert; `upsertedCount` says whether it was new. */
export const INBOX_UPDATE = [{ $set: { processedAt: { $ifNull: ['$processedAt', '$$NOW'] } } }];

/**
 * Creates the inbox. `process` records `(consumer, eventId)` first in the caller's open transaction and
 * runs `fn` only when the pair is new; both commit or roll back together. A concurrent duplicate in
 * another transaction makes MongoDB raise a write conflict, which is passed on unchanged so that
 * `session.withTransaction` retries, and the retry resolves `duplicate`.
 */
export function mongoInbox(options: MongoInboxOptions): MongoInbox {
  const collection = 'collection' in options ? options.collection : options.db.collection<InboxDocument>(options.collectionName ?? 'oncely_inbox');
  return {
    collection,
    async process(tx, input, fn): Promise<InboxOutcome> {
      assertInboxInput(input);
      assertInTransaction(tx, 'inbox.process');
      let inserted: boolean;
      try {
        const result = await collection.updateOne({ _id: inboxId(input) }, INBOX_UPDATE, { upsert: true, session: tx });
        inserted = result.upsertedCount === 1;
      } catch (error) {
        throw passTransient(error) ?? toStorageError(ADAPTER, 'inbox.process', error);
      }
      if (!inserted) return 'duplicate';
      await fn(tx);
      return 'processed';
    },
  };
}
