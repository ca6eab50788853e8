import { runInboxConformance, runOutboxConformance, uniqueKey } from '@oncely/testkit';
import type { ClientSession, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mongoInbox, mongoOutbox } from '../../src/index.js';
import { DRIVERS, realServer, suiteTitle, testDatabaseName, transactionServer } from '../support/real-server.js';

const server = await transactionServer(
  'mongodb outbox and inbox conformance (real replica set)',
  realServer('mongodb outbox and inbox conformance (real server)'),
);

for (const { name, MongoClient } of DRIVERS) {
  describe.skipIf(server.kind === 'skipped')(suiteTitle(`mongodb outbox and inbox conformance (${name})`, server), () => {
    const dbName = testDatabaseName('conformance');
    let client: MongoClient;
    beforeAll(async () => {
      client = await new MongoClient(server.kind === 'available' ? server.url : 'mongodb://unused').connect();
    });
    afterAll(async () => {
      await client.db(dbName).dropDatabase();
      await client.close();
    });

    // withTransaction retries write conflicts, as a real consumer's transaction does.
    const transaction = <T>(work: (tx: ClientSession) => Promise<T>) => client.withSession((session) => session.withTransaction(() => work(session)));
    /** Fresh collections (created up front: older servers cannot create them inside a transaction). */
    async function collections(...labels: string[]) {
      const db = client.db(dbName);
      const names = labels.map((label) => uniqueKey(label));
      for (const collection of names) await db.createCollection(collection);
      return { db, names };
    }

    runOutboxConformance<ClientSession>({ describe, it, expect }, {
      name: `mongodb outbox (${name})`,
      createOutbox: async () => {
        const { db, names } = await collections('outbox', 'sequences', 'orders', 'aggregates');
        const outbox = mongoOutbox({ db, collectionName: names[0], sequencesCollectionName: names[1], aggregatesCollectionName: names[3] });
        await outbox.ensureIndexes();
        const orders = db.collection<{ _id: string }>(names[2]!);
        return {
          outbox,
          transaction,
          write: async (tx, id) => void (await orders.insertOne({ _id: id }, { session: tx })),
          read: async (id) => (await orders.findOne({ _id: id })) !== null,
        };
      },
    });

    runInboxConformance<ClientSession>({ describe, it, expect }, {
      name: `mongodb inbox (${name})`,
      createInbox: async ({ onEvent, clock }) => {
        const { db, names } = await collections('inbox', 'credits');
        const inbox = mongoInbox({ db, collectionName: names[0], onEvent, clock });
        await inbox.ensureIndexes();
        const credits = db.collection<{ _id: string; times: number }>(names[1]!);
        return {
          inbox,
          transaction,
          apply: async (tx, id) => void (await credits.updateOne({ _id: id }, { $inc: { times: 1 } }, { upsert: true, session: tx })),
          applied: async (id) => (await credits.findOne({ _id: id }))?.times ?? 0,
        };
      },
    });
  });
}
