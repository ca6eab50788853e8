import {
  createIdempotency,
  fingerprint,
  isOncelyError,
  isStorageError,
  type Scope,
  type StorageError,
} from '@oncely/core';
import * as driver7 from 'mongodb';
import * as driver6 from 'mongodb6';
import { describe, expect, it } from 'vitest';
import { classifyMongoError, encodeScopeId, mongoStore, mongoTransactionalStore } from '../../src/index.js';
import { claimantEcho, scriptedClient, scriptedCollection } from '../support/scripted-driver.js';

const drivers = [
  { name: 'mongodb 7.x', driver: driver7 },
  { name: 'mongodb 6.x', driver: driver6 as unknown as typeof driver7 },
];

const scope: Scope = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k-1' };
const claimInput = { scope, fingerprint: 'f', token: 'mine', leaseMs: 30_000, retentionMs: 86_400_000 };
const request = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k-1', request: { amount: '10.00' } };
const completed = (fingerprint: string) => ({
  _id: encodeScopeId(scope),
  fingerprint,
  state: 'succeeded',
  fence: 1,
  response: JSON.stringify({ status: 201, body: { id: 'pay_1' } }),
  createdAt: new Date(),
  expiresAt: new Date(Date.now() + 60_000),
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

for (const { name, driver } of drivers) {
  const duplicateKey = () =>
    new driver.MongoServerError({ code: 11000, codeName: 'DuplicateKey', errmsg: 'E11000 duplicate key error collection: app.oncely_idempotency index: _id_' });
  const writeConflict = () =>
    new driver.MongoServerError({ code: 112, codeName: 'WriteConflict', errmsg: 'Write conflict during plan execution', errorLabels: ['TransientTransactionError'] });
  const unknownCommit = () => {
    const error = new driver.MongoServerError({ code: 50, codeName: 'MaxTimeMSExpired', errmsg: 'operation exceeded time limit' });
    error.addErrorLabel('UnknownTransactionCommitResult');
    return error;
  };
  const reset = () => new driver.MongoNetworkError('connection 3 to 127.0.0.1:27017 closed');

  describe(`error mapping with the real error classes of ${name}`, () => {
    it('classifies duplicate keys, write conflicts, unknown commit results and everything else', () => {
      expect(classifyMongoError(duplicateKey())).toBe('duplicate_key');
      expect(classifyMongoError(writeConflict())).toBe('write_conflict');
      expect(classifyMongoError(unknownCommit())).toBe('unknown_commit_result');
      expect(classifyMongoError(reset())).toBe('other');
      expect(classifyMongoError(new driver.MongoNetworkTimeoutError('timed out'))).toBe('other');
      expect(classifyMongoError(new driver.MongoServerError({ code: 13, codeName: 'Unauthorized', errmsg: 'not authorized' }))).toBe('other');
      expect(classifyMongoError('a string')).toBe('other');
    });

    it('every store operation turns a network error into a StorageError that names it and keeps the cause', async () => {
      const error = reset();
      const { collection } = scriptedCollection({
        findOneAndUpdate: [error],
        updateOne: [error],
        deleteOne: [error],
        findOne: [error],
        find: [error],
        createIndex: [error],
      });
      const store = mongoStore({ collection });
      const calls: [string, () => Promise<unknown>][] = [
        ['claim', () => store.claim(claimInput)],
        ['complete', () => store.complete({ scope, token: 'mine', state: 'succeeded', response: { status: 201 }, retentionMs: 1 })],
        ['release', () => store.release({ scope, token: 'mine' })],
        ['extend', () => store.extend({ scope, token: 'mine', leaseMs: 1 })],
        ['get', () => store.get(scope)],
        ['purgeExpired', () => store.purgeExpired(10)],
        ['ensureIndexes', () => store.ensureIndexes()],
      ];
      for (const [operation, call] of calls) {
        const failure = (await rejection(call())) as StorageError;
        expect(isStorageError(failure)).toBe(true);
        expect(failure.adapter).toBe('mongodb');
        expect(failure.operation).toBe(operation);
        expect(failure.cause).toBe(error);
        expect(failure.message).toContain('oncely/mongodb');
      }
    });

    it('a duplicate key on the claim means a concurrent upsert won: the claim reads that record', async () => {
      const { collection, calls } = scriptedCollection({ findOneAndUpdate: [duplicateKey(), completed('f')] });
      const result = await mongoStore({ collection }).claim(claimInput);
      expect(calls.findOneAndUpdate).toBe(2);
      expect(result.kind).toBe('existing');
      expect(result.kind === 'existing' && result.record.response).toEqual({ status: 201, body: { id: 'pay_1' } });
    });

    it('a duplicate key that keeps coming back fails closed after three attempts', async () => {
      const { collection, calls } = scriptedCollection({ findOneAndUpdate: [duplicateKey()] });
      const failure = await rejection(mongoStore({ collection }).claim(claimInput));
      expect(isStorageError(failure)).toBe(true);
      expect((failure as StorageError).cause).toBeInstanceOf(driver.MongoServerError);
      expect(calls.findOneAndUpdate).toBe(3);
    });

    it('when the claim cannot reach MongoDB the handler never runs (fail closed)', async () => {
      const { collection } = scriptedCollection({ findOneAndUpdate: [reset()] });
      const engine = createIdempotency({ store: mongoStore({ collection }) });
      let executions = 0;
      const failure = await rejection(
        engine.run(request, async () => {
          executions++;
          return { status: 201 };
        }),
      );
      expect(isStorageError(failure)).toBe(true);
      expect(executions).toBe(0);
    });

    it('a transaction that conflicts with a concurrent holder waits, then replays what the holder committed', async () => {
      const { client, log } = scriptedClient({ setName: 'rs0' });
      const stored = completed(await fingerprint(request.operation, request.request));
      const { collection, calls } = scriptedCollection({ findOneAndUpdate: [writeConflict(), writeConflict(), stored] });
      const engine = createIdempotency({ store: await mongoTransactionalStore({ client, collection }) });
      let executions = 0;
      const result = await engine.runInTransaction(request, async () => {
        executions++;
        return { status: 201 };
      });
      expect(result).toEqual({ kind: 'replayed', state: 'succeeded', response: { status: 201, body: { id: 'pay_1' } } });
      expect(executions).toBe(0);
      expect(calls.findOneAndUpdate).toBe(3);
      expect(log).toEqual({ started: 3, aborted: 3, commits: 0, ended: 1 });
    });

    it('a holder that outlasts lockWaitMs makes the claim busy: in progress, nothing executed', async () => {
      const { client, log } = scriptedClient({ setName: 'rs0' });
      const { collection } = scriptedCollection({ findOneAndUpdate: [writeConflict()] });
      const engine = createIdempotency({ store: await mongoTransactionalStore({ client, collection, lockWaitMs: 30 }) });
      let executions = 0;
      const result = await engine.runInTransaction(request, async () => {
        executions++;
        return { status: 201 };
      });
      expect(result.kind).toBe('in_progress');
      expect(executions).toBe(0);
      expect(log.commits).toBe(0);
      expect(log.started).toBe(log.aborted);
    });

    it('an unknown commit result is committed again, and the handler runs once', async () => {
      const { client, log } = scriptedClient({ setName: 'rs0' }, [unknownCommit(), undefined]);
      const { collection } = scriptedCollection({ updateOne: [{ matchedCount: 1 }] });
      collection.findOneAndUpdate = claimantEcho({ ...completed('f'), state: 'in_progress', fence: 1 });
      const store = await mongoTransactionalStore({ client, collection });
      let executions = 0;
      const result = await createIdempotency({ store }).runInTransaction(request, async () => {
        executions++;
        return { status: 201, body: { id: 'pay_2' } };
      });
      expect(result.kind).toBe('executed');
      expect(executions).toBe(1);
      expect(log.commits).toBe(2);
    });

    it('a commit that fails for good surfaces as a StorageError after the handler ran once', async () => {
      const { client } = scriptedClient({ setName: 'rs0' }, [reset()]);
      const { collection } = scriptedCollection({ updateOne: [{ matchedCount: 1 }] });
      collection.findOneAndUpdate = claimantEcho({ ...completed('f'), state: 'in_progress', fence: 1 });
      const store = await mongoTransactionalStore({ client, collection });
      let executions = 0;
      const failure = await rejection(
        createIdempotency({ store }).runInTransaction(request, async () => {
          executions++;
          return { status: 201 };
        }),
      );
      expect(isOncelyError(failure, 'storage_error')).toBe(true);
      expect((failure as StorageError).operation).toBe('commit');
      expect(executions).toBe(1);
    });
  });
}
