import { runStoreConformance, uniqueKey } from '@oncely/testkit';
import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeScopeId, type MongoStore, mongoStore, mongoTransactionalStore } from '../../src/index.js';
import { DRIVERS, realServer, suiteTitle, testDatabaseName, transactionServer } from '../support/real-server.js';

const server = realServer('mongodb lease-mode conformance with a 200-way race (real server)');
const transactions = await transactionServer('mongodb transactional-store conformance (real replica set)', server);

for (const { name, MongoClient } of DRIVERS) {
  describe.skipIf(server.kind === 'skipped')(suiteTitle(`mongodb store on a real server (${name})`, server), () => {
    const dbName = testDatabaseName('store');
    let client: MongoClient;
    beforeAll(async () => {
      client = new MongoClient(server.kind === 'available' ? server.url : 'mongodb://unused');
      await client.connect();
    });
    afterAll(async () => {
      await client.db(dbName).dropDatabase();
      await client.close();
    });

    const options = () => ({ client, dbName, collectionName: uniqueKey('idempotency') });
    const ready = async <S extends MongoStore>(store: S): Promise<S> => {
      await store.ensureIndexes();
      return store;
    };
    const inspect = async (store: MongoStore, scope: Parameters<typeof encodeScopeId>[0]) =>
      (await store.collection.findOne({ _id: encodeScopeId(scope) })) ?? undefined;

    runStoreConformance({ describe, it, expect }, {
      name: `mongodb lease mode (${name})`,
      createStore: () => ready(mongoStore(options())),
      inspect,
      raceSize: 200,
    });

    describe.skipIf(transactions.kind === 'skipped')(suiteTitle(`mongodb transactional store (${name})`, transactions), () => {
      runStoreConformance({ describe, it, expect }, {
        name: `mongodb transactional store (${name})`,
        createStore: async () => ready(await mongoTransactionalStore(options())),
        inspect,
        raceSize: 200,
      });
    });

    it('ensureIndexes creates the TTL index on expiresAt that removes records once they expire', async () => {
      const store = await ready(mongoStore(options()));
      await store.ensureIndexes();
      const indexes = await store.collection.listIndexes().toArray();
      const ttl = indexes.find((index) => index.name === 'oncely_expires_at_ttl');
      expect(ttl?.key).toEqual({ expiresAt: 1 });
      expect(ttl?.expireAfterSeconds).toBe(0);
    });

    it.skipIf(transactions.kind === 'available')('a standalone server refuses the transactional store with capability_missing', async () => {
      await expect(mongoTransactionalStore(options())).rejects.toMatchObject({ code: 'capability_missing' });
    });
  });
}
