import { type IdempotencyStore, OncelyError, type Scope } from '@oncely/core';
import {
  type ClaimInput,
  type ClaimResult,
  type CompleteInput,
  type FenceResult,
  type LeaseInput,
  storageGuard,
  toStorageError,
} from '@oncely/core/adapter';
import type { ClientSession, Collection, MongoClient } from 'mongodb';
import { classifyMongoError } from '../errors/mongo-errors.js';
import {
  claimCommand,
  completeUpdate,
  extendUpdate,
  liveFilter,
  ownedFilter,
  purgeCandidates,
  purgeFilter,
  READ_PROJECTION,
  TTL_INDEX,
} from './queries.js';
import { type IdempotencyDocument, type ReadDocument, toClaimResult, toRecord } from './record-document.js';

/** Adapter name in errors and events. */
export const ADAPTER = 'mongodb';
/** Collection used when only a client is given. */
export const DEFAULT_COLLECTION = 'oncely_idempotency';
/** The server already retries the upsert race on a pure `_id` filter; this covers servers and paths that do not. */
const CLAIM_ATTEMPTS = 3;

/**
 * Where the records live: a client (records go to `dbName`, default the database named in the
 * connection string, and `collectionName`, default `oncely_idempotency`), or a collection of your own.
 * Give the store a collection of its own: `purgeExpired` treats every document in it as a record.
 */
export type MongoStoreOptions =
  | { readonly client: MongoClient; readonly dbName?: string; readonly collectionName?: string }
  | { readonly collection: Collection<IdempotencyDocument>; readonly client?: MongoClient };

/** The lease-mode MongoDB store. */
export interface MongoStore extends IdempotencyStore {
  /** The collection the records live in. */
  readonly collection: Collection<IdempotencyDocument>;
  /** Creates the TTL index on `expiresAt` (idempotent; run it at deploy time or start-up). */
  ensureIndexes(): Promise<void>;
}

/** The collection named by the options. */
export function resolveCollection(options: MongoStoreOptions): Collection<IdempotencyDocument> {
  if ('collection' in options && options.collection) return options.collection;
  if ('client' in options && options.client) {
    const { client, dbName, collectionName = DEFAULT_COLLECTION } = options as { client: MongoClient; dbName?: string; collectionName?: string };
    return client.db(dbName).collection<IdempotencyDocument>(collectionName);
  }
  throw new OncelyError('invalid_option', 'oncely/mongodb: give mongoStore a client or a collection');
}

/** Runs a driver call and turns any failure into a `StorageError` naming the operation: the shared guard. */
export const storageCall = storageGuard(ADAPTER);

/** The claim-or-read in one `findOneAndUpdate`; see {@link claimCommand}. */
export async function claimRecord(
  collection: Collection<IdempotencyDocument>,
  input: ClaimInput,
  session?: ClientSession,
): Promise<ClaimResult> {
  const { filter, update, options } = claimCommand(input);
  for (let attempt = 1; ; attempt++) {
    try {
      const document = await collection.findOneAndUpdate(filter, update, session ? { ...options, session } : options);
      return toClaimResult(document as ReadDocument | null, input.token);
    } catch (error) {
      // The record now exists, so the next attempt matches it and decides on it.
      if (!session && classifyMongoError(error) === 'duplicate_key' && attempt < CLAIM_ATTEMPTS) continue;
      throw toStorageError(ADAPTER, 'claim', error);
    }
  }
}

/** Saves a terminal outcome if `input.token` still holds the record. */
export async function completeRecord(
  collection: Collection<IdempotencyDocument>,
  input: CompleteInput,
  session?: ClientSession,
): Promise<FenceResult> {
  const filter = ownedFilter(input.scope, input.token, session ? 'transaction' : 'lease');
  const result = await storageCall('complete', () =>
    collection.updateOne(filter, completeUpdate(input), session ? { session } : {}),
  );
  return result.matchedCount === 1 ? 'ok' : 'fence_lost';
}

/**
 * Creates the lease-mode store. Works on every topology (standalone, replica set, sharded); for
 * transactions use `mongoTransactionalStore`. Never opens or closes a client: `close()` is a no-op.
 */
export function mongoStore(options: MongoStoreOptions): MongoStore {
  const collection = resolveCollection(options);
  return {
    name: ADAPTER,
    capabilities: { transactions: false, nativeTtl: true },
    collection,
    claim: (input) => claimRecord(collection, input),
    complete: (input) => completeRecord(collection, input),
    async release(input: LeaseInput) {
      const result = await storageCall('release', () => collection.deleteOne(ownedFilter(input.scope, input.token, 'lease')));
      return result.deletedCount === 1 ? 'ok' : 'fence_lost';
    },
    async extend(input: LeaseInput & { readonly leaseMs: number }) {
      const filter = ownedFilter(input.scope, input.token, 'lease');
      const result = await storageCall('extend', () => collection.updateOne(filter, extendUpdate(input.leaseMs)));
      return result.matchedCount === 1 ? 'ok' : 'fence_lost';
    },
    get: (scope: Scope) =>
      storageCall('get', async () => {
        const document = await collection.findOne(liveFilter(scope), { projection: READ_PROJECTION });
        return document ? toRecord(document as ReadDocument) : undefined;
      }),
    purgeExpired: (limit: number) =>
      storageCall('purgeExpired', async () => {
        const { filter, options: findOptions } = purgeCandidates(limit);
        const expired = await collection.find(filter, findOptions).toArray();
        if (expired.length === 0) return 0;
        const result = await collection.deleteMany(purgeFilter(expired.map((document) => document._id)));
        return result.deletedCount;
      }),
    ensureIndexes: () =>
      storageCall('ensureIndexes', async () => {
        await collection.createIndex(TTL_INDEX.key, TTL_INDEX.options);
      }),
    // The caller owns the client; the store opened nothing.
    close: async () => undefined,
  };
}
