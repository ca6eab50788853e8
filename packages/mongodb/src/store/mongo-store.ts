import { type IdempotencyStore, OncelyError, type Scope, type StoreOperation } from '@oncely/core';
import {
  type ClaimInput,
  type ClaimResult,
  type CompleteInput,
  type FenceResult,
  type LeaseInput,
  storageGuard,
  toStorageError,
} from '@oncely/core/adapter';
import type { ClientSession, Collection, MongoClient, WriteConcernSettings } from 'mongodb';
import { assertSimpleCollation } from '../deployment/collation.js';
import { assertLeaseClock, readDeployment } from '../deployment/deployment.js';
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
/** The server retries the upsert race on a pure `_id` filter from 5.0, never in a transaction; this covers the rest. */
const CLAIM_ATTEMPTS = 3;
/** Lease-mode writes wait for a majority by default: a claim acknowledged by one node alone can be rolled back by a failover. */
export const DEFAULT_WRITE_CONCERN: WriteConcernSettings = { w: 'majority' };
/** Reads the engine's lost-reply check relies on go to the primary, whatever the client's read preference. */
export const PRIMARY = { readPreference: 'primary' } as const;

/**
 * Where the records live: a client (records go to `dbName`, default the database named in the
 * connection string, and `collectionName`, default `oncely_idempotency`), or a collection of your own.
 * Give the store a collection of its own: `purgeExpired` treats every document in it as a record.
 */
export type MongoStoreOptions = (
  | { readonly client: MongoClient; readonly dbName?: string; readonly collectionName?: string }
  | { readonly collection: Collection<IdempotencyDocument>; readonly client?: MongoClient }
) & {
  /**
   * Write concern of every write outside a transaction (claim, complete, release, extend, purge).
   * Default `{ w: 'majority' }`. With `{ w: 1 }` a claim or an outcome the primary acknowledged can be
   * rolled back when it fails over, and the retry then runs the handler again.
   */
  readonly writeConcern?: WriteConcernSettings;
};

/** The lease-mode MongoDB store. */
export interface MongoStore extends IdempotencyStore {
  /** The collection the records live in. */
  readonly collection: Collection<IdempotencyDocument>;
  /**
   * Checks the collection (a non-simple default collation is refused with `invalid_option`) and, in
   * lease mode, the topology (a sharded cluster is refused with `capability_missing`), then creates the
   * TTL index on `expiresAt` (idempotent; run it at deploy time or start-up).
   */
  ensureIndexes(): Promise<void>;
}

/** How a store writes: inside the caller's transaction, or on its own with a write concern. */
export type WriteContext = { readonly session: ClientSession } | { readonly writeConcern: WriteConcernSettings };

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
export async function claimRecord(collection: Collection<IdempotencyDocument>, input: ClaimInput, write: WriteContext): Promise<ClaimResult> {
  const { filter, update, options } = claimCommand(input);
  for (let attempt = 1; ; attempt++) {
    try {
      const document = await collection.findOneAndUpdate(filter, update, { ...options, ...write });
      return toClaimResult(document as ReadDocument | null, input.token);
    } catch (error) {
      // The record now exists, so the next attempt matches it and decides on it.
      if (!('session' in write) && classifyMongoError(error) === 'duplicate_key' && attempt < CLAIM_ATTEMPTS) continue;
      throw toStorageError(ADAPTER, 'claim', error);
    }
  }
}

/** Saves a terminal outcome if `input.token` still holds the record. */
export async function completeRecord(collection: Collection<IdempotencyDocument>, input: CompleteInput, write: WriteContext): Promise<FenceResult> {
  const filter = ownedFilter(input.scope, input.token, 'session' in write ? 'transaction' : 'lease');
  const result = await storageCall('complete', () => collection.updateOne(filter, completeUpdate(input), write));
  return result.matchedCount === 1 ? 'ok' : 'fence_lost';
}

/** Wraps a store operation: `ready('claim', call)` runs `call` once the deployment checks have passed. */
export type Ready = <T>(operation: StoreOperation, call: () => Promise<T>) => Promise<T>;

/**
 * Runs `check` before the first call through it, its failures reported as a `StorageError` of the
 * calling operation (oncely refusals pass unchanged); once it passed, calls go straight through, and
 * a failed check runs again next time.
 */
export function checkedOnce(check: () => Promise<void>): Ready {
  let passed = false;
  let pending: Promise<void> | undefined;
  return (operation, call) => {
    if (passed) return call();
    pending ??= check().then(
      () => {
        passed = true;
      },
      (error: unknown) => {
        pending = undefined;
        throw error;
      },
    );
    return pending.then(call, (error: unknown) => {
      throw toStorageError(ADAPTER, operation, error);
    });
  };
}

/** What lease mode relies on, asked once: one clock for every lease (no mongos) and `_id`s compared byte by byte. */
export async function assertLeaseReady(collection: Collection<IdempotencyDocument>): Promise<void> {
  // Both questions in one round trip; the topology's answer is reported first when both refuse.
  const [deployment, collation] = await Promise.allSettled([readDeployment(collection.db), assertSimpleCollation(collection)]);
  if (deployment.status === 'rejected') throw deployment.reason;
  assertLeaseClock(deployment.value);
  if (collation.status === 'rejected') throw collation.reason;
}

/**
 * The store over `collection`: every write outside a transaction uses `writeConcern`, every read the
 * primary, and `ready` wraps the claim and `ensureIndexes` (the checks the deployment must pass).
 */
export function leaseModeStore(
  collection: Collection<IdempotencyDocument>,
  writeConcern: WriteConcernSettings,
  ready: Ready,
): MongoStore {
  const write: WriteContext = { writeConcern };
  return {
    name: ADAPTER,
    capabilities: { transactions: false, nativeTtl: true },
    collection,
    claim: (input) => ready('claim', () => claimRecord(collection, input, write)),
    complete: (input) => completeRecord(collection, input, write),
    async release(input: LeaseInput) {
      const result = await storageCall('release', () => collection.deleteOne(ownedFilter(input.scope, input.token, 'lease'), write));
      return result.deletedCount === 1 ? 'ok' : 'fence_lost';
    },
    async extend(input: LeaseInput & { readonly leaseMs: number }) {
      const filter = ownedFilter(input.scope, input.token, 'lease');
      const result = await storageCall('extend', () => collection.updateOne(filter, extendUpdate(input.leaseMs), write));
      return result.matchedCount === 1 ? 'ok' : 'fence_lost';
    },
    get: (scope: Scope) =>
      storageCall('get', async () => {
        const document = await collection.findOne(liveFilter(scope), { projection: READ_PROJECTION, ...PRIMARY });
        return document ? toRecord(document as ReadDocument) : undefined;
      }),
    purgeExpired: (limit: number) =>
      storageCall('purgeExpired', async () => {
        const { filter, options: findOptions } = purgeCandidates(limit);
        const expired = await collection.find(filter, { ...findOptions, ...PRIMARY }).toArray();
        if (expired.length === 0) return 0;
        const result = await collection.deleteMany(purgeFilter(expired.map((document) => document._id)), write);
        return result.deletedCount;
      }),
    ensureIndexes: () =>
      ready('ensureIndexes', () =>
        storageCall('ensureIndexes', async () => {
          await collection.createIndex(TTL_INDEX.key, TTL_INDEX.options);
        }),
      ),
    // The caller owns the client; the store opened nothing.
    close: async () => undefined,
  };
}

/**
 * Creates the lease-mode store for a standalone or a replica set; for transactions use
 * `mongoTransactionalStore`. Before its first claim (or `ensureIndexes`) it asks the server once what
 * it is and refuses a sharded cluster (`capability_missing`: mongos routers judge leases by their own
 * clocks) and a collection with a non-simple collation (`invalid_option`). Never opens or closes a
 * client: `close()` is a no-op.
 */
export function mongoStore(options: MongoStoreOptions): MongoStore {
  const collection = resolveCollection(options);
  return leaseModeStore(
    collection,
    options.writeConcern ?? DEFAULT_WRITE_CONCERN,
    checkedOnce(() => assertLeaseReady(collection)),
  );
}
