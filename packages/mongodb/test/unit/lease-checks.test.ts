import { isOncelyError, isStorageError, type StorageError } from '@oncely/core';
import * as driver7 from 'mongodb';
import { describe, expect, it } from 'vitest';
import { assertLeaseClock, encodeScopeId, mongoStore, mongoTransactionalStore } from '../../src/index.js';
import { claimantEcho, scriptedClient, scriptedCollection } from '../support/scripted-driver.js';

// The checks lease mode makes before it relies on the deployment, and the options every store call
// hands the driver, through scripted stand-ins (not MongoDB) that answer `hello` and `listCollections`.

const scope = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k-1' };
const claimInput = { scope, fingerprint: 'f', token: 'mine', leaseMs: 30_000, retentionMs: 86_400_000 };
const held = { _id: encodeScopeId(scope), fingerprint: 'f', state: 'in_progress', fence: 1, createdAt: new Date(), expiresAt: new Date(Date.now() + 60_000) };
const reset = () => new driver7.MongoNetworkError('connection 3 to 127.0.0.1:27017 closed');

describe('what lease mode checks before its first claim (scripted driver, not MongoDB)', () => {
  it('asks the server once: one hello and one listCollections, then claims go straight through', async () => {
    const { collection, calls } = scriptedCollection({});
    collection.findOneAndUpdate = claimantEcho(held);
    const store = mongoStore({ collection });
    await Promise.all([store.claim(claimInput), store.claim(claimInput)]);
    await store.claim(claimInput);
    await store.ensureIndexes().catch(() => undefined);
    expect(calls.hello).toBe(1);
    expect(calls.listCollections).toBe(1);
  });

  it('a check that cannot reach the server fails the claim closed, as a StorageError of the claim, and runs again next time', async () => {
    const { collection, calls } = scriptedCollection({ hello: [reset(), { setName: 'rs0' }] });
    collection.findOneAndUpdate = claimantEcho(held);
    const store = mongoStore({ collection });
    const failure = (await store.claim(claimInput).catch((error: unknown) => error)) as StorageError;
    expect(isStorageError(failure)).toBe(true);
    expect(failure.operation).toBe('claim');
    expect(failure.cause).toBeInstanceOf(driver7.MongoNetworkError);
    expect((await store.claim(claimInput)).kind).toBe('claimed');
    expect(calls.hello).toBe(2);
  });

  it('behind mongos the claim and ensureIndexes are refused with capability_missing, and nothing is written', async () => {
    const { collection, calls } = scriptedCollection({ hello: [{ msg: 'isdbgrid' }] });
    const store = mongoStore({ collection });
    const refusal = await store.claim(claimInput).catch((error: unknown) => error);
    expect(isOncelyError(refusal, 'capability_missing')).toBe(true);
    expect((refusal as Error).message).toMatch(/\$\$NOW from its own clock.*two handlers run at once.*mongoTransactionalStore\(\)/s);
    await expect(store.ensureIndexes()).rejects.toMatchObject({ code: 'capability_missing' });
    expect(calls.findOneAndUpdate).toBeUndefined();
    expect(calls.createIndex).toBeUndefined();
  });

  it('a standalone and a replica set judge leases by one clock; a sharded cluster does not', () => {
    expect(() => assertLeaseClock({ kind: 'standalone' })).not.toThrow();
    expect(() => assertLeaseClock({ kind: 'replica_set', setName: 'rs0' })).not.toThrow();
    expect(() => assertLeaseClock({ kind: 'sharded' })).toThrow(expect.objectContaining({ code: 'capability_missing' }));
  });

  it('a collection whose default collation is not simple is refused; simple, or none, passes', async () => {
    for (const [options, refused] of [
      [{ collation: { locale: 'en', strength: 2 } }, true],
      [{ collation: { locale: 'fr' } }, true],
      [{ collation: { locale: 'simple' } }, false],
      [{}, false],
    ] as const) {
      const { collection, calls } = scriptedCollection({ listCollections: [[{ name: 'oncely_idempotency', type: 'collection', options }]], createIndex: ['oncely_expires_at_ttl'] });
      const indexed = mongoStore({ collection }).ensureIndexes();
      if (refused) {
        const refusal = await indexed.catch((error: unknown) => error);
        expect(isOncelyError(refusal, 'invalid_option')).toBe(true);
        expect((refusal as Error).message).toMatch(/app\.oncely_idempotency has the default collation .*merge scopes/);
        expect(calls.createIndex).toBeUndefined();
      } else {
        await indexed;
        expect(calls.createIndex).toBe(1);
      }
    }
  });

  it('mongoTransactionalStore checks the collation when it is created', async () => {
    const { collection } = scriptedCollection({ listCollections: [[{ name: 'oncely_idempotency', options: { collation: { locale: 'de' } } }]] });
    await expect(mongoTransactionalStore({ client: scriptedClient({ setName: 'rs0' }).client, collection })).rejects.toMatchObject({ code: 'invalid_option' });
  });

  it('on a sharded cluster the transactional store refuses lease-mode claims without asking the server again', async () => {
    const { collection, calls } = scriptedCollection({});
    const store = await mongoTransactionalStore({ client: scriptedClient({ msg: 'isdbgrid' }).client, collection });
    await expect(store.claim(claimInput)).rejects.toMatchObject({ code: 'capability_missing' });
    expect(calls.findOneAndUpdate).toBeUndefined();
    expect(calls.hello).toBeUndefined();
  });
});

describe('the options every store call hands the driver (scripted driver, not MongoDB)', () => {
  const lastArg = (args: readonly unknown[]) => args.at(-1) as Record<string, unknown>;

  it('lease-mode writes carry { w: "majority" } unless the store was given a write concern; reads ask for the primary', async () => {
    for (const [writeConcern, expected] of [
      [undefined, { w: 'majority' }],
      [{ w: 1 }, { w: 1 }],
    ] as const) {
      const { collection, log } = scriptedCollection({ updateOne: [{ matchedCount: 1 }], deleteOne: [{ deletedCount: 1 }], findOne: [null], find: [[{ _id: 'x' }]], deleteMany: [{ deletedCount: 1 }] });
      collection.findOneAndUpdate = claimantEcho(held, log);
      const store = mongoStore({ collection, writeConcern });
      await store.claim(claimInput);
      await store.extend({ scope, token: 'mine', leaseMs: 1_000 });
      await store.complete({ scope, token: 'mine', state: 'succeeded', response: { status: 201 }, retentionMs: 1_000 });
      await store.release({ scope, token: 'mine' });
      await store.get(scope);
      await store.purgeExpired(5);
      const byMethod = (method: string) => log.filter((call) => call.method === method).map((call) => lastArg(call.args));
      for (const method of ['findOneAndUpdate', 'updateOne', 'deleteOne', 'deleteMany']) {
        expect(byMethod(method).length).toBeGreaterThan(0);
        for (const options of byMethod(method)) expect(options.writeConcern).toEqual(expected);
      }
      for (const method of ['findOne', 'find']) expect(byMethod(method)).toEqual([expect.objectContaining({ readPreference: 'primary' })]);
    }
  });

  it('inside a transaction the writes carry only the session: the transaction has its own write concern', async () => {
    const { client } = scriptedClient({ setName: 'rs0' });
    const { collection, log } = scriptedCollection({ updateOne: [{ matchedCount: 1 }] });
    collection.findOneAndUpdate = claimantEcho(held, log);
    const store = await mongoTransactionalStore({ client, collection });
    await store.transaction(claimInput, async () => ({ action: 'commit', state: 'succeeded', response: { status: 201 }, retentionMs: 1_000, value: 1 }));
    const writes = log.filter((call) => call.method === 'findOneAndUpdate' || call.method === 'updateOne').map((call) => lastArg(call.args));
    expect(writes).toHaveLength(2);
    for (const options of writes) {
      expect(options.session).toBeDefined();
      expect(options.writeConcern).toBeUndefined();
    }
  });
});
