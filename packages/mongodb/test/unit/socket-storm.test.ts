import { createIdempotency, isStorageError } from '@oncely/core';
import { createRelay, type Publisher } from '@oncely/core/outbox';
import * as driver7 from 'mongodb';
import type { ClientSession, Document } from 'mongodb';
import * as driver6 from 'mongodb6';
import { describe, expect, it } from 'vitest';
import { mongoInbox, mongoJournal, mongoOutbox, mongoStore, mongoTransactionalStore } from '../../src/index.js';
import { cursorReply, scriptedDeployment, type WireCommand } from '../support/scripted-wire.js';
import { unheardErrors } from '@oncely/test-support';
import { stormProxy } from '../support/storm-proxy.js';

// The real driver (both majors) through a TCP proxy that destroys every connection every 20 ms, in
// front of a scripted primary (NOT MongoDB: it answers every command with an empty but well-formed
// reply). What this shows is the error path of every driver object oncely creates or drives (sessions
// from startSession and withSession, transactions, cursors, retryable writes, the relay's loop) when
// sockets die mid-command: nothing reaches uncaughtException or unhandledRejection, and every call
// that fails, fails with a StorageError. What a real server then stores is
// test/real-server/connection-storm.test.ts (MONGODB_URL).

/** Empty, well-formed answers: nothing found, nothing changed, every write acknowledged. */
function emptyAnswer({ name, body }: WireCommand): Document | undefined {
  const ns = `${String(body.$db)}.${String(body[name])}`;
  if (name === 'find' || name === 'aggregate' || name === 'listCollections' || name === 'listIndexes') return cursorReply(ns);
  if (name === 'findAndModify') return { ok: 1, value: null, lastErrorObject: { n: 0, updatedExisting: false } };
  if (name === 'update' || name === 'delete') return { ok: 1, n: 0, nModified: 0 };
  if (name === 'insert') return { ok: 1, n: 1 };
  return undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const drivers = [
  { name: 'mongodb 7.x', MongoClient: driver7.MongoClient },
  { name: 'mongodb 6.x', MongoClient: driver6.MongoClient as unknown as typeof driver7.MongoClient },
];

for (const { name, MongoClient } of drivers) {
  describe(`a connection storm through a TCP proxy to a scripted primary (real ${name} driver; not MongoDB)`, () => {
    it('store, transactional store, journal, outbox, relay and inbox: no error goes unheard, every failure is a StorageError', async () => {
      const deployment = await scriptedDeployment(['primary'], emptyAnswer);
      const proxy = await stormProxy({ host: '127.0.0.1', port: deployment.port('primary') });
      const url = `mongodb://127.0.0.1:${proxy.port}/app?directConnection=true&serverSelectionTimeoutMS=1500&connectTimeoutMS=300&socketTimeoutMS=1000&heartbeatFrequencyMS=500`;
      const client = new MongoClient(url);
      const unheard = unheardErrors();
      try {
        await client.connect();
        const db = client.db();
        const engine = createIdempotency({ store: mongoStore({ client }) });
        const transactional = createIdempotency({ store: await mongoTransactionalStore({ client }) });
        const journal = mongoJournal({ db });
        const outbox = mongoOutbox({ db });
        const inbox = mongoInbox({ db });
        const publisher: Publisher = { name: 'memory', publish: async (events) => events.map(() => ({ kind: 'published' as const })) };
        const relay = createRelay({ source: outbox.source, publisher, id: `storm-${name}`, leaseMs: 1_000, pollIntervalMs: 20, statsIntervalMs: 50, purge: false });
        relay.start();

        // Every 60 ms: often enough to cut commands mid-flight, rarely enough that the driver reconnects in between.
        proxy.storm(60);
        let stop = false;
        const failures: unknown[] = [];
        let calls = 0;
        const worker = async (lane: number) => {
          for (let n = 0; !stop; n++) {
            const key = `k-${lane}-${n}`;
            const outcomes = await Promise.allSettled([
              engine.run({ tenant: 't', operation: 'lease', key, request: {} }, async () => ({ status: 200 })),
              transactional.runInTransaction({ tenant: 't', operation: 'pay', key, request: {} }, async ({ tx }) => {
                await outbox.enqueue(tx as ClientSession, { aggregateType: 'payment', aggregateId: key, eventType: 'paid', payload: {} });
                return { status: 201 };
              }),
              journal.begin(`op-${key}`),
              outbox.source.claim({ owner: `lane-${lane}`, limit: 5, leaseMs: 1_000 }),
              outbox.source.markPublished([`e-${key}`]),
              outbox.source.stats(),
              inbox.run({ consumer: 'c', eventId: `e-${key}` }, async () => undefined),
            ]);
            calls += outcomes.length;
            for (const outcome of outcomes) if (outcome.status === 'rejected') failures.push(outcome.reason);
          }
        };
        const lanes = Promise.all([0, 1, 2].map(worker));
        await sleep(2_000);
        stop = true;
        await lanes;
        proxy.calm();
        await relay.stop();
        // Let late socket errors surface before counting.
        await sleep(200);

        expect(unheard.errors, 'errors that reached uncaughtException or unhandledRejection').toEqual([]);
        expect(proxy.destroyed, 'connections the storm destroyed').toBeGreaterThan(10);
        expect(calls).toBeGreaterThan(0);
        expect(failures.length, 'the storm failed some calls').toBeGreaterThan(0);
        expect(failures.filter((failure) => !isStorageError(failure)), 'every failure is a StorageError').toEqual([]);
      } finally {
        unheard.stop();
        await client.close();
        await proxy.close();
        await deployment.close();
      }
    }, 30_000);
  });
}
