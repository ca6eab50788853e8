import { runOutboxSourceConformance, uniqueKey } from '@oncely/testkit';
import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mongoOutbox } from '../../src/index.js';
import { DRIVERS, realServer, suiteTitle, testDatabaseName, transactionServer } from '../support/real-server.js';

const server = await transactionServer('mongodb outbox-source conformance (real replica set)', realServer('mongodb outbox conformance (real server)'));

for (const { name, MongoClient } of DRIVERS) {
  describe.skipIf(server.kind === 'skipped')(suiteTitle(`mongodb outbox conformance on a real replica set (${name})`, server), () => {
    const dbName = testDatabaseName('outbox_conformance');
    let client: MongoClient;
    beforeAll(async () => {
      client = await new MongoClient(server.kind === 'available' ? server.url : 'mongodb://unused').connect();
    });
    afterAll(async () => {
      await client.db(dbName).dropDatabase();
      await client.close();
    });

    runOutboxSourceConformance({ describe, it, expect }, {
      name: `mongodb outbox (${name})`,
      createOutbox: async () => {
        const db = client.db(dbName);
        const sequencesCollectionName = uniqueKey('sequences');
        // An aggregates collection of its own too: each outbox is empty, as the suite requires.
        const outbox = mongoOutbox({ db, collectionName: uniqueKey('outbox'), sequencesCollectionName, aggregatesCollectionName: uniqueKey('aggregates') });
        await outbox.ensureIndexes();
        // Created up front, as the outbox and inbox suite does: not every server creates collections inside a transaction.
        await db.createCollection(sequencesCollectionName);
        return {
          source: outbox.source,
          // Each event in a committed transaction of its own, as a business write would enqueue it.
          enqueue: (event) => client.withSession((session) => session.withTransaction(() => outbox.enqueue(session, event))),
          async inspect(eventId) {
            const row = await outbox.collection.findOne({ _id: eventId });
            return row
              ? { published: row.publishedAt !== null, deadLettered: row.deadLetteredAt !== null, attempts: row.attempts, leaseOwner: row.leaseOwner }
              : undefined;
          },
        };
      },
    });

    // WIRE HERE: runOutboxConformance and runInboxConformance. They are being added to @oncely/testkit
    // together with requeue/run/purgeProcessed on the MongoDB outbox and inbox; call them in this
    // describe, with `mongoOutbox`/`mongoInbox` over `client.db(dbName)` as above, once they are exported.
  });
}
