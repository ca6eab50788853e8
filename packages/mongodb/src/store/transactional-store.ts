import { OncelyError, systemClock, type TransactionalStore } from '@oncely/core';
import { type ClaimInput, integerOption, toStorageError, type TransactionClaim, type TransactionDecision } from '@oncely/core/adapter';
import { fullJitter } from '@oncely/core/retry';
import type { ClientSession, MongoClient, TransactionOptions } from 'mongodb';
import { assertSimpleCollation } from '../deployment/collation.js';
import { assertTransactions, detectDeployment, leaseModeOnRouter, type MongoDeployment } from '../deployment/deployment.js';
import { classifyMongoError } from '../errors/mongo-errors.js';
import {
  ADAPTER,
  claimRecord,
  completeRecord,
  DEFAULT_WRITE_CONCERN,
  leaseModeStore,
  type MongoStore,
  type MongoStoreOptions,
  type Ready,
  resolveCollection,
  storageCall,
} from './mongo-store.js';

/** Options of {@link mongoTransactionalStore}. */
export type MongoTransactionalStoreOptions = MongoStoreOptions & {
  /**
   * How long a claim waits for a concurrent transaction holding the same key to commit or roll back
   * (MongoDB reports the conflict at once instead of blocking), in ms. Past it the engine answers
   * `in_progress`. Default 5 000.
   */
  readonly lockWaitMs?: number;
  /** Read and write concern of every transaction. Default: snapshot reads, majority writes. */
  readonly transactionOptions?: TransactionOptions;
};

/** A MongoDB store on a replica set or sharded cluster: lease mode plus `runInTransaction`. */
export interface MongoTransactionalStore extends MongoStore, TransactionalStore<ClientSession> {
  readonly capabilities: { readonly transactions: true; readonly nativeTtl: true };
  /** What `hello` said when the store was created. */
  readonly deployment: Exclude<MongoDeployment, { kind: 'standalone' }>;
}

/** Every transaction's read and write concern unless told otherwise: snapshot reads, majority writes. */
export const DEFAULT_TRANSACTION_OPTIONS: TransactionOptions = {
  readConcern: { level: 'snapshot' },
  writeConcern: { w: 'majority' },
  readPreference: 'primary',
};
/** Backoff between claim attempts while another transaction holds the key. */
const LOCK_BACKOFF = { baseMs: 5, capMs: 100 };
const COMMIT_ATTEMPTS = 3;

/** Aborts if a transaction is open; an abort that fails leaves nothing committed, so it is ignored. */
async function abortQuietly(session: ClientSession): Promise<void> {
  if (session.inTransaction()) await session.abortTransaction().catch(() => undefined);
}

async function commitWithRetry(session: ClientSession): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await session.commitTransaction();
      return;
    } catch (error) {
      // Committing again is safe and is how an unknown outcome gets known.
      if (classifyMongoError(error) === 'unknown_commit_result' && attempt < COMMIT_ATTEMPTS) continue;
      throw toStorageError(ADAPTER, 'commit', error);
    }
  }
}

const positiveMs = (name: string, value: number) => integerOption(`oncely/mongodb: ${name}`, value);

/** Lease mode behind mongos: refused before anything is written (see `leaseModeOnRouter`). */
const refuseLeaseMode = <T>(): Promise<T> => Promise.reject(leaseModeOnRouter());
/** Lets every call through: the transactional store checked its deployment when it was created. */
const checkedAtCreation: Ready = (_operation, call) => call();

/**
 * Creates the transactional store after asking the server what it is (one `hello`) and how the
 * collection compares strings (one `listCollections`). Throws an `OncelyError` with code
 * `capability_missing` on a standalone server (MongoDB runs multi-document transactions only on
 * replica sets, a single-node one is enough, and sharded clusters), and `invalid_option` for a
 * collection with a non-simple default collation. On a sharded cluster `runInTransaction` works and
 * lease mode (`run`, `claim`) is refused with `capability_missing`: mongos routers judge leases by
 * their own clocks.
 */
export async function mongoTransactionalStore(options: MongoTransactionalStoreOptions): Promise<MongoTransactionalStore> {
  const lockWaitMs = positiveMs('lockWaitMs', options.lockWaitMs ?? 5_000);
  const transactionOptions = options.transactionOptions ?? DEFAULT_TRANSACTION_OPTIONS;
  const collection = resolveCollection(options);
  const client: MongoClient = options.client ?? collection.db.client;
  const deployment = await detectDeployment(client);
  assertTransactions(deployment);
  await storageCall('checkCollation', () => assertSimpleCollation(collection));

  /** Starts a transaction and claims in it, waiting out a concurrent holder of the key. */
  async function claimInTransaction(session: ClientSession, input: ClaimInput): Promise<TransactionClaim> {
    const deadline = systemClock.now() + lockWaitMs;
    for (let attempt = 0; ; attempt++) {
      session.startTransaction(transactionOptions);
      try {
        return await claimRecord(collection, input, { session });
      } catch (error) {
        await abortQuietly(session);
        const failure = classifyMongoError((error as { cause?: unknown }).cause);
        if (failure !== 'write_conflict' && failure !== 'duplicate_key') throw error;
        // Another transaction wrote this key: MongoDB does not block, so wait for its commit or rollback.
        const left = deadline - systemClock.now();
        if (left <= 0) return { kind: 'busy' };
        await systemClock.sleep(Math.min(left, fullJitter(Math.min(attempt, 20), LOCK_BACKOFF)));
      }
    }
  }

  async function transaction<T>(
    input: ClaimInput,
    work: (claim: TransactionClaim, tx: ClientSession) => Promise<TransactionDecision<T>>,
  ): Promise<T> {
    const session = client.startSession();
    try {
      const claim = await claimInTransaction(session, input);
      let decision: TransactionDecision<T>;
      try {
        decision = await work(claim, session);
      } catch (error) {
        await abortQuietly(session);
        throw error;
      }
      if (decision.action === 'rollback') {
        await abortQuietly(session);
        return decision.value;
      }
      if (claim.kind !== 'claimed') {
        await abortQuietly(session);
        throw new OncelyError('invalid_state', 'oncely/mongodb: a transaction can only commit an outcome it claimed');
      }
      const saved = await completeRecord(collection, { ...decision, scope: input.scope, token: input.token }, { session }).catch(
        async (error: unknown) => {
          await abortQuietly(session);
          throw error;
        },
      );
      if (saved === 'fence_lost') {
        await abortQuietly(session);
        throw new OncelyError('lease_lost', 'oncely/mongodb: the claimed record changed inside the transaction; nothing was committed');
      }
      await commitWithRetry(session);
      return decision.value;
    } finally {
      await session.endSession().catch(() => undefined);
    }
  }

  const lease = leaseModeStore(collection, options.writeConcern ?? DEFAULT_WRITE_CONCERN, checkedAtCreation);
  return {
    ...lease,
    claim: deployment.kind === 'sharded' ? refuseLeaseMode : lease.claim,
    capabilities: { transactions: true, nativeTtl: true },
    deployment,
    transaction,
  };
}
