import { createRelay, type OutboxEvent, type Publisher } from '@oncely/core/outbox';
import { uniqueKey } from '@oncely/testkit';
import type { ClientSession, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MongoInbox, type MongoOutbox, mongoInbox, mongoOutbox } from '../../src/index.js';
import { DRIVERS, realServer, suiteTitle, testDatabaseName, transactionServer } from '../support/real-server.js';

const server = await transactionServer('mongodb outbox and inbox in transactions (real replica set)', realServer('mongodb outbox and inbox (real server)'));

for (const { name, MongoClient } of DRIVERS) {
  describe.skipIf(server.kind === 'skipped')(suiteTitle(`mongodb outbox and inbox on a real replica set (${name})`, server), () => {
    const dbName = testDatabaseName('outbox');
    let client: MongoClient;
    let outbox: MongoOutbox;
    let inbox: MongoInbox;
    beforeAll(async () => {
      client = await new MongoClient(server.kind === 'available' ? server.url : 'mongodb://unused').connect();
      const db = client.db(dbName);
      outbox = mongoOutbox({ db, collectionName: uniqueKey('outbox') });
      inbox = mongoInbox({ db, collectionName: uniqueKey('inbox') });
      await outbox.ensureIndexes();
      for (const collection of ['orders', 'balances', inbox.collection.collectionName, 'oncely_outbox_sequences']) await db.createCollection(collection).catch(() => undefined);
    });
    afterAll(async () => {
      await client.db(dbName).dropDatabase();
      await client.close();
    });

    const transaction = <T>(work: (tx: ClientSession) => Promise<T>) => client.withSession((session) => session.withTransaction(() => work(session)));

    it('an event enqueued with the business write commits with it, and a rollback leaves neither', async () => {
      const orderId = uniqueKey('ord');
      await transaction(async (tx) => {
        await client.db(dbName).collection('orders').insertOne({ orderId }, { session: tx });
        await outbox.enqueue(tx, { aggregateType: 'order', aggregateId: orderId, eventType: 'order.created.v1', payload: { orderId } });
      });
      const lost = uniqueKey('ord');
      await expect(
        transaction(async (tx) => {
          await client.db(dbName).collection('orders').insertOne({ orderId: lost }, { session: tx });
          await outbox.enqueue(tx, { aggregateType: 'order', aggregateId: lost, eventType: 'order.created.v1', payload: {} });
          throw new Error('crash before commit');
        }),
      ).rejects.toThrow('crash before commit');
      expect(await outbox.collection.countDocuments({ aggregateId: orderId })).toBe(1);
      expect(await outbox.collection.countDocuments({ aggregateId: lost })).toBe(0);
      expect(await client.db(dbName).collection('orders').countDocuments({ orderId: lost })).toBe(0);
      const [stored] = await outbox.collection.find({ aggregateId: orderId }).toArray();
      expect(stored?.aggregateSeq).toBe(1);
    });

    it('3 relays publish 200 events of 20 aggregates at least once, in sequence order, and the inbox applies each once', async () => {
      const run = uniqueKey('agg');
      const aggregates = Array.from({ length: 20 }, (_, i) => `${run}-${i}`);
      for (let seq = 1; seq <= 10; seq++) {
        await transaction(async (tx) => {
          for (const aggregateId of aggregates) {
            await outbox.enqueue(tx, { aggregateType: 'account', aggregateId, eventType: 'account.credited.v1', payload: { seq, amount: 1 } });
          }
        });
      }
      const published: OutboxEvent[] = [];
      const publisher: Publisher = {
        name: 'test-broker',
        async publish(events) {
          published.push(...events);
          // Every fifth batch is lost after the broker took it, so the relay publishes it again.
          return events.map((_, i) => (i % 5 === 4 ? { kind: 'failed', error: new Error('ack lost') } : { kind: 'published' }));
        },
      };
      const relays = [1, 2, 3].map((i) => createRelay({ source: outbox.source, publisher, batchSize: 8, maxAttempts: 100, id: `relay-${i}-${run}`, backoff: { baseMs: 1, capMs: 5 } }));
      for (let round = 0; round < 500 && (await outbox.source.stats()).unpublished > 0; round++) {
        await Promise.all(relays.map((relay) => relay.runOnce()));
      }
      const mine = published.filter((event) => event.aggregateId.startsWith(run));
      expect(new Set(mine.map((event) => event.eventId)).size).toBe(200);
      for (const aggregateId of aggregates) {
        const seqs = mine.filter((event) => event.aggregateId === aggregateId).map((event) => event.aggregateSeq);
        const firsts = seqs.filter((seq, i) => seqs.indexOf(seq) === i);
        expect(firsts).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      }
      const balances = client.db(dbName).collection<{ _id: string; total: number }>('balances');
      const outcomes = { processed: 0, duplicate: 0 };
      for (const event of mine) {
        const outcome = await transaction((tx) =>
          inbox.process(tx, { consumer: 'ledger', eventId: event.eventId }, async (session) => {
            await balances.updateOne({ _id: event.aggregateId }, { $inc: { total: 1 } }, { upsert: true, session });
          }),
        );
        outcomes[outcome]++;
      }
      expect(outcomes.processed).toBe(200);
      expect(outcomes.duplicate).toBe(mine.length - 200);
      for (const aggregateId of aggregates) expect((await balances.findOne({ _id: aggregateId }))?.total).toBe(10);
    });
  });
}
