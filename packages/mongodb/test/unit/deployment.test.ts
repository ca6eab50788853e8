import { isOncelyError } from '@oncely/core';
import { describe, expect, it } from 'vitest';
import { assertTransactions, deploymentFromHello, mongoTransactionalStore } from '../../src/index.js';
import { scriptedClient, scriptedCollection } from '../support/scripted-driver.js';

describe('deployment detection from hello', () => {
  it('a hello with setName is a replica set member, one with msg "isdbgrid" a mongos, anything else a standalone', () => {
    expect(deploymentFromHello({ isWritablePrimary: true, setName: 'rs0', hosts: ['db:27017'] })).toEqual({ kind: 'replica_set', setName: 'rs0' });
    expect(deploymentFromHello({ isWritablePrimary: true, msg: 'isdbgrid' })).toEqual({ kind: 'sharded' });
    expect(deploymentFromHello({ isWritablePrimary: true, maxWireVersion: 25 })).toEqual({ kind: 'standalone' });
    expect(deploymentFromHello({ isWritablePrimary: true, setName: '' })).toEqual({ kind: 'standalone' });
  });

  it('a standalone is refused with capability_missing and told how to get a replica set', () => {
    let refusal: unknown;
    try {
      assertTransactions({ kind: 'standalone' });
    } catch (error) {
      refusal = error;
    }
    expect(isOncelyError(refusal, 'capability_missing')).toBe(true);
    expect((refusal as Error).message).toMatch(/replica set.*--replSet rs0/s);
    expect(() => assertTransactions({ kind: 'replica_set', setName: 'rs0' })).not.toThrow();
    expect(() => assertTransactions({ kind: 'sharded' })).not.toThrow();
  });

  it('mongoTransactionalStore asks the server and refuses a standalone before any record is touched', async () => {
    const { client } = scriptedClient({ isWritablePrimary: true });
    const { collection, calls } = scriptedCollection({});
    await expect(mongoTransactionalStore({ client, collection })).rejects.toMatchObject({ code: 'capability_missing' });
    expect(calls).toEqual({});
  });

  it('on a replica set or behind mongos the store declares transactions and remembers the topology', async () => {
    for (const [hello, deployment] of [
      [{ setName: 'rs0' }, { kind: 'replica_set', setName: 'rs0' }],
      [{ msg: 'isdbgrid' }, { kind: 'sharded' }],
    ] as const) {
      const store = await mongoTransactionalStore({ client: scriptedClient(hello).client, collection: scriptedCollection({}).collection });
      expect(store.capabilities).toEqual({ transactions: true, nativeTtl: true });
      expect(store.deployment).toEqual(deployment);
    }
  });

  it('a bad lockWaitMs is refused when the store is created', async () => {
    const { client } = scriptedClient({ setName: 'rs0' });
    await expect(mongoTransactionalStore({ client, lockWaitMs: 0 })).rejects.toMatchObject({ code: 'invalid_option' });
  });
});
