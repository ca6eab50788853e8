import { uniqueKey } from '@oncely/testkit';
import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The journal contract suite lives with the core for now (not yet published in @oncely/testkit).
import { runJournalConformance } from '@oncely/testkit';
import { type MongoJournal, mongoJournal } from '../../src/index.js';
import { DRIVERS, realServer, suiteTitle, testDatabaseName } from '../support/real-server.js';

const server = realServer('mongodb journal conformance (real server)');

for (const { name, MongoClient } of DRIVERS) {
  describe.skipIf(server.kind === 'skipped')(suiteTitle(`mongodb journal on a real server (${name})`, server), () => {
    const url = server.kind === 'available' ? server.url : 'mongodb://unused';
    const dbName = testDatabaseName('journal');
    const clients: MongoClient[] = [];
    let client: MongoClient;
    const connect = async () => {
      const opened = await new MongoClient(url).connect();
      clients.push(opened);
      return opened;
    };
    beforeAll(async () => {
      client = await connect();
    });
    afterAll(async () => {
      await client.db(dbName).dropDatabase();
      await Promise.all(clients.map((opened) => opened.close()));
    });

    runJournalConformance({ describe, it, expect }, {
      name: `mongodb journal (${name})`,
      createJournal: async () => {
        const journal = mongoJournal({ db: client.db(dbName), collectionName: uniqueKey('journal') });
        await journal.ensureIndexes();
        return journal;
      },
      // A second client proves entries are durable in MongoDB, not held by the first one.
      reopen: async (journal: MongoJournal) =>
        mongoJournal({ collection: (await connect()).db(dbName).collection(journal.collection.collectionName) }),
    });
  });
}
