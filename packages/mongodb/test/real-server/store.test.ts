import { isOncelyError } from '@oncely/core';
import { runStoreConformance, uniqueKey } from '@oncely/testkit';
import type { MongoClient, WriteConcernSettings } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimExplainCheck, type CheckContext, purgeExplainCheck } from '../../first-run/checks.js';
import { encodeScopeId, type MongoStore, mongoStore, mongoTransactionalStore } from '../../src/index.js';
import { DRIVERS, leaseServer, realServer, serverWhere, suiteTitle, testDatabaseName, withDeployment } from '../support/real-server.js';

const server = await withDeployment(realServer('mongodb store on a real server: conformance with a 200-way race, explain, refusals'));
const lease = await leaseServer('mongodb lease-mode conformance at w:majority and w:1 (real server)', server);
// The conformance suite runs lease mode on every store, and behind mongos the transactional store refuses
// it; runInTransaction through mongos is proven by transactions.test.ts.
const transactions = await serverWhere(
  'mongodb transactional-store conformance (real replica set)',
  server,
  (deployment) => deployment.kind === 'replica_set',
  'the conformance suite needs lease mode and transactions: a replica set (a standalone runs no transactions, a mongos refuses lease mode)',
  'needs a replica set',
);
const sharded = server.kind === 'available' && server.deployment?.kind === 'sharded';

for (const { name, MongoClient } of DRIVERS) {
  describe.skipIf(server.kind === 'skipped')(suiteTitle(`mongodb store on a real server (${name})`, server), () => {
    const url = server.kind === 'available' ? server.url : 'mongodb://unused';
    const dbName = testDatabaseName('store');
    let client: MongoClient;
    beforeAll(async () => {
      client = new MongoClient(url);
      await client.connect();
    });
    afterAll(async () => {
      await client.db(dbName).dropDatabase();
      await client.close();
    });

    const options = (writeConcern?: WriteConcernSettings) => ({ client, dbName, collectionName: uniqueKey('idempotency'), writeConcern });
    const ready = async <S extends MongoStore>(store: S): Promise<S> => {
      await store.ensureIndexes();
      return store;
    };
    const inspect = async (store: MongoStore, scope: Parameters<typeof encodeScopeId>[0]) =>
      (await store.collection.findOne({ _id: encodeScopeId(scope) })) ?? undefined;

    describe.skipIf(lease.kind === 'skipped')(suiteTitle(`mongodb lease mode (${name})`, lease), () => {
      runStoreConformance({ describe, it, expect }, {
        name: `mongodb lease mode, w:majority (${name})`,
        createStore: () => ready(mongoStore(options())),
        inspect,
        raceSize: 200,
      });
      // w:1 is the user's explicit choice the README documents; once per run is enough to show it works.
      if (name === 'driver 7.x') {
        runStoreConformance({ describe, it, expect }, {
          name: `mongodb lease mode, w:1 (${name})`,
          createStore: () => ready(mongoStore(options({ w: 1 }))),
          inspect,
          raceSize: 200,
        });
      }

      it('ensureIndexes creates the TTL index on expiresAt that removes records once they expire', async () => {
        const store = await ready(mongoStore(options()));
        const indexes = await store.collection.listIndexes().toArray();
        const ttl = indexes.find((index) => index.name === 'oncely_expires_at_ttl');
        expect(ttl?.key).toEqual({ expiresAt: 1 });
        expect(ttl?.expireAfterSeconds).toBe(0);
      });
    });

    describe.skipIf(transactions.kind === 'skipped')(suiteTitle(`mongodb transactional store (${name})`, transactions), () => {
      runStoreConformance({ describe, it, expect }, {
        name: `mongodb transactional store (${name})`,
        createStore: async () => ready(await mongoTransactionalStore(options())),
        inspect,
        raceSize: 200,
      });
    });

    // The explain checks of the first-run script, here so that `npm test` with MONGODB_URL proves them too.
    for (const check of [claimExplainCheck, purgeExplainCheck]) {
      it(`explain: ${check.title}`, async () => {
        const context: CheckContext = {
          url,
          deployment: server.kind === 'available' && server.deployment ? server.deployment : { kind: 'standalone' },
          dbName: `${dbName}_${check.id.replace(/-/g, '_')}`,
          appName: 'oncely-store-test',
          connect: async () => ({ client, started: [] }),
        };
        try {
          const outcome = await check.run(context);
          expect(outcome, outcome.details.join('\n')).toMatchObject({ status: 'passed' });
        } finally {
          await client.db(context.dbName).dropDatabase();
        }
      });
    }

    it('a collection created with a case-insensitive collation is refused with invalid_option', async () => {
      const collectionName = uniqueKey('ci');
      await client.db(dbName).createCollection(collectionName, { collation: { locale: 'en', strength: 2 } });
      const store = sharded ? mongoTransactionalStore({ client, dbName, collectionName }) : mongoStore({ client, dbName, collectionName }).ensureIndexes();
      await expect(store).rejects.toMatchObject({ code: 'invalid_option' });
    });

    it.skipIf(!sharded)('behind mongos lease mode is refused with capability_missing, and nothing is written', async () => {
      const store = mongoStore(options());
      const claim = store.claim({ scope: { tenant: 't', principal: 'p', operation: 'o', key: uniqueKey('k') }, fingerprint: 'f', token: 't', leaseMs: 1_000, retentionMs: 60_000 });
      expect(isOncelyError(await claim.catch((error: unknown) => error), 'capability_missing')).toBe(true);
      await expect(store.ensureIndexes()).rejects.toMatchObject({ code: 'capability_missing' });
      expect(await store.collection.countDocuments()).toBe(0);
    });

    it.skipIf(server.kind === 'available' && server.deployment?.kind !== 'standalone')(
      'a standalone server refuses the transactional store with capability_missing',
      async () => {
        await expect(mongoTransactionalStore(options())).rejects.toMatchObject({ code: 'capability_missing' });
      },
    );
  });
}
