import type { JournalOperation } from '@oncely/core';
import {
  assertValidOperationId,
  type JournalEntry,
  type OperationJournal,
  operationNotBegun,
  resolveBegin,
  resolveListUnresolved,
  resolveOutcome,
  resolvePurgeSettled,
  toJournalEntry,
  toStorageError,
} from '@oncely/core/adapter';
import type { Collection, Db, Document } from 'mongodb';
import { classifyMongoError } from '../errors/mongo-errors.js';
import { ADAPTER, PRIMARY, storageCall } from '../store/mongo-store.js';
import {
  beginCommand,
  completeUpdate,
  JOURNAL_INDEX,
  type JournalDocument,
  markUnknownUpdate,
  recordAttemptUpdate,
  settledFilter,
  unresolvedQuery,
} from './journal-queries.js';

/** Collection used when only a database is given. */
export const DEFAULT_JOURNAL_COLLECTION = 'oncely_journal';
const BEGIN_ATTEMPTS = 3;

/** Where the journal lives: a database (collection `collectionName`, default `oncely_journal`) or a collection of its own. */
export type MongoJournalOptions =
  | { readonly db: Db; readonly collectionName?: string }
  | { readonly collection: Collection<JournalDocument> };

/** The MongoDB operation journal. */
export interface MongoJournal extends OperationJournal {
  readonly collection: Collection<JournalDocument>;
  /** Creates the `(state, updatedAt)` index that listing and purging walk (idempotent). */
  ensureIndexes(): Promise<void>;
}

const toEntry = (document: JournalDocument): JournalEntry =>
  toJournalEntry({
    operationId: document._id,
    key: document.key,
    attempts: document.attempts,
    state: document.state,
    requestJson: document.request,
    dataJson: document.data,
    lastError: document.lastError,
    createdAt: document.createdAt.getTime(),
    updatedAt: document.updatedAt.getTime(),
  });

/**
 * Creates a durable operation journal on MongoDB (any topology). Every change is one
 * `findOneAndUpdate` with an update pipeline judged by the server's clock; final outcomes stay final.
 */
export function mongoJournal(options: MongoJournalOptions): MongoJournal {
  const collection =
    'collection' in options ? options.collection : options.db.collection<JournalDocument>(options.collectionName ?? DEFAULT_JOURNAL_COLLECTION);

  /** Applies an update pipeline to an entry that must exist and returns the entry after it. */
  async function change(operation: JournalOperation, operationId: string, update: Document[]): Promise<JournalEntry> {
    assertValidOperationId(operationId);
    // Read inside the guard: a document this code cannot read is a corrupt_record StorageError.
    return storageCall(operation, async () => {
      const document = await collection.findOneAndUpdate({ _id: operationId }, update, { returnDocument: 'after', includeResultMetadata: false });
      if (!document) throw operationNotBegun(ADAPTER, operationId);
      return toEntry(document);
    });
  }

  return {
    name: ADAPTER,
    collection,
    async begin(operationId, beginOptions) {
      const { key, requestJson } = resolveBegin(operationId, beginOptions);
      const { filter, update, options: commandOptions } = beginCommand(operationId, key, requestJson);
      for (let attempt = 1; ; attempt++) {
        try {
          const result = await collection.findOneAndUpdate(filter, update, commandOptions);
          if (!result.value) throw new Error('begin returned no document');
          const started = result.lastErrorObject?.updatedExisting === false;
          return { kind: started ? 'started' : 'resumed', entry: toEntry(result.value) };
        } catch (error) {
          // A concurrent begin inserted the entry first: read it on the next attempt.
          if (classifyMongoError(error) === 'duplicate_key' && attempt < BEGIN_ATTEMPTS) continue;
          throw toStorageError(ADAPTER, 'journal.begin', error);
        }
      }
    },
    async get(operationId) {
      assertValidOperationId(operationId);
      // The primary, whatever the client's read preference: a resuming caller must see the latest attempt.
      return storageCall('journal.get', async () => {
        const document = await collection.findOne({ _id: operationId }, PRIMARY);
        return document ? toEntry(document) : undefined;
      });
    },
    recordAttempt: (operationId) => change('journal.recordAttempt', operationId, recordAttemptUpdate()),
    async complete(operationId, outcome) {
      const { state, dataJson } = resolveOutcome(outcome);
      return change('journal.complete', operationId, completeUpdate(state, dataJson));
    },
    markUnknown: (operationId, lastError) => change('journal.markUnknown', operationId, markUnknownUpdate(lastError)),
    async listUnresolved(listOptions) {
      const { staleAfterMs, limit } = resolveListUnresolved(listOptions);
      const { filter, options: findOptions } = unresolvedQuery(staleAfterMs, limit);
      return storageCall('journal.listUnresolved', async () =>
        (await collection.find(filter, { ...findOptions, ...PRIMARY }).toArray()).map(toEntry),
      );
    },
    async purgeSettled(purgeOptions) {
      const { olderThanMs, limit } = resolvePurgeSettled(purgeOptions);
      return storageCall('journal.purgeSettled', async () => {
        const filter = settledFilter(olderThanMs);
        const settled = await collection.find(filter, { projection: { _id: 1 }, sort: { updatedAt: 1 }, limit }).toArray();
        if (settled.length === 0) return 0;
        const result = await collection.deleteMany({ ...filter, _id: { $in: settled.map((document) => document._id) } });
        return result.deletedCount;
      });
    },
    ensureIndexes: () =>
      storageCall('journal.ensureIndexes', async () => {
        await collection.createIndex(JOURNAL_INDEX.key, JOURNAL_INDEX.options);
      }),
    // The caller owns the client.
    close: async () => undefined,
  };
}
