import { createIdempotency, isStorageError } from '@oncely/core';
import { createRelay, type Publisher } from '@oncely/core/outbox';
import type { ClientSession, MongoClient } from 'mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import { mongoInbox, mongoJournal, mongoOutbox, mongoStore, mongoTransactionalStore } from '../../src/index.js';
import { DRIVERS, type RealServer, realServer, suiteTitle, testDatabaseName, transactionServer } from '../support/real-server.js';
import { unheardErrors } from '@oncely/test-support';
import { stormProxy } from '../support/storm-proxy.js';

/**
 * Every connection the driver opens goes through a TCP proxy to the replica set's primary, and the
 * proxy destroys them all every 40 ms for 3 s while this package's objects work: the transactional
 * store (a payment and an outbox event in the handler's transaction), the lease-mode store, the
 * journal, the outbox relay and an inbox consumer. Nothing reaches `uncaughtException` or
 * `unhandledRejection`; every failure the package answers is a StorageError (the handler's own
 * driver writes fail as themselves: the engine passes a handler's errors through); every payment
 * that answered `executed` committed exactly once; after the storm the relay drains what committed
 * and the inbox applies every event exactly once.
 */

const suite = 'mongodb connection storm (real replica set through a socket-destroying proxy)';
const base = await transactionServer(suite, realServer(suite));
/** A seed list resolved by DNS (mongodb+srv) cannot be pinned to one proxied host: announced and skipped. */
function pinnable(found: RealServer): RealServer {
  if (found.kind === 'skipped' || !found.url.startsWith('mongodb+srv:')) return found;
  const reason = 'MONGODB_URL is a mongodb+srv URL; give a mongodb:// URL of the replica set';
  console.warn(`@oncely/mongodb: SKIPPED "${suite}": ${reason}`);
  return { kind: 'skipped', reason, summary: 'mongodb+srv URL, give mongodb://' };
}
const server = pinnable(base);

/** `url` with its hosts replaced by the proxy, pinned to it, and quick to give up on a dead socket. */
function throughProxy(url: string, port: number): string {
  const parsed = /^mongodb:\/\/(?:([^@/]*)@)?[^/?]+(\/[^?]*)?(?:\?(.*))?$/.exec(url);
  if (!parsed) throw new Error('MONGODB_URL is not a mongodb:// URL');
  const [, credentials, path, query] = parsed;
  const kept = (query ?? '').split('&').filter((option) => option && !/^(replicaSet|directConnection|serverSelectionTimeoutMS)=/i.test(option));
  // TLS through 127.0.0.1: the certificate names the server, not the proxy.
  if (kept.some((option) => /^(tls|ssl)=true$/i.test(option))) kept.push('tlsAllowInvalidHostnames=true');
  kept.push('directConnection=true', 'serverSelectionTimeoutMS=2000', 'connectTimeoutMS=1000', 'heartbeatFrequencyMS=500');
  return `mongodb://${credentials ? `${credentials}@` : ''}127.0.0.1:${port}${path && path !== '/' ? path : '/'}?${kept.join('&')}`;
}

/** Marks an error thrown by the test's own driver calls inside a handler or an inbox function. */
class OwnWriteError extends Error {}
const own = async <T>(write: () => Promise<T>): Promise<T> =>
  write().catch((error: unknown) => {
    throw new OwnWriteError('the test handler\'s own write failed', { cause: error });
  });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const { name, MongoClient } of DRIVERS) {
  describe.skipIf(server.kind === 'skipped')(suiteTitle(`${suite} (${name})`, server), () => {
    const url = server.kind === 'available' ? server.url : 'mongodb://unused';
    const dbName = testDatabaseName('storm');
    const opened: MongoClient[] = [];
    afterAll(async () => {
      await opened[0]?.db(dbName).dropDatabase();
      for (const client of opened) await client.close();
    });

    it('sockets destroyed every 40 ms: no unheard error, failures are StorageErrors, one payment per executed key, every event applied once', async () => {
      const direct = await new MongoClient(url).connect();
      opened.push(direct);
      const hello = await direct.db('admin').command({ hello: 1 });
      const [host, port] = String(hello.primary ?? hello.me).split(':');
      const proxy = await stormProxy({ host: host!, port: Number(port ?? 27017) });
      const client = new MongoClient(throughProxy(url, proxy.port), { maxPoolSize: 8 });
      opened.push(client);
      const setupDb = direct.db(dbName);
      const db = client.db(dbName);
      const outbox = mongoOutbox({ db });
      const inbox = mongoInbox({ db });
      const journal = mongoJournal({ db });
      const leaseStore = mongoStore({ client, dbName, collectionName: 'lease_records' });
      // Set up without the storm: collections exist before any transaction writes them.
      await mongoOutbox({ db: setupDb }).ensureIndexes();
      await mongoInbox({ db: setupDb }).ensureIndexes();
      await mongoJournal({ db: setupDb }).ensureIndexes();
      await mongoStore({ client: direct, dbName, collectionName: 'lease_records' }).ensureIndexes();
      for (const collection of ['payments', 'effects', 'oncely_idempotency', 'oncely_outbox_sequences']) await setupDb.createCollection(collection).catch(() => undefined);
      const transactional = await mongoTransactionalStore({ client, dbName });
      await transactional.ensureIndexes();

      const unheard = unheardErrors();
      try {
        const payments = db.collection<{ key: string }>('payments');
        const effects = db.collection<{ _id: string; n: number }>('effects');
        const engine = createIdempotency({ store: leaseStore });
        const txEngine = createIdempotency({ store: transactional });
        const delivered: string[] = [];
        const publisher: Publisher = {
          name: 'memory',
          async publish(events) {
            delivered.push(...events.map((event) => event.eventId));
            return events.map(() => ({ kind: 'published' as const }));
          },
        };
        const relay = createRelay({ source: outbox.source, publisher, id: `storm-${name}`, leaseMs: 1_000, pollIntervalMs: 50, statsIntervalMs: 0, purge: false });
        relay.start();

        let stop = false;
        const failures: unknown[] = [];
        const executed: string[] = [];
        const apply = (eventId: string) =>
          inbox.run({ consumer: 'storm', eventId }, (tx) => own(() => effects.updateOne({ _id: eventId }, { $inc: { n: 1 } }, { upsert: true, session: tx })));
        // The consumer: every delivery applied through the inbox, a failed one tried again.
        let consumerDone = false;
        const consumer = (async () => {
          while (!consumerDone || delivered.length > 0) {
            const eventId = delivered.shift();
            if (eventId === undefined) {
              await sleep(20);
              continue;
            }
            await apply(eventId).catch((error: unknown) => {
              failures.push(error);
              delivered.push(eventId);
            });
          }
        })();
        const worker = async (lane: number) => {
          for (let n = 0; !stop; n++) {
            const key = `k-${lane}-${n}`;
            const outcomes = await Promise.allSettled([
              txEngine.runInTransaction({ tenant: 't', operation: 'pay', key, request: { key } }, async ({ tx }) => {
                await own(() => payments.insertOne({ key }, { session: tx as ClientSession }));
                await outbox.enqueue(tx as ClientSession, { aggregateType: 'payment', aggregateId: key, eventType: 'paid', payload: { key } }).catch((error: unknown) => {
                  // A write conflict passes through unchanged (for withTransaction); anything else is a StorageError.
                  if (isStorageError(error)) throw error;
                  throw new OwnWriteError('enqueue passed a transient error through', { cause: error });
                });
                return { status: 201, body: { key } };
              }),
              engine.run({ tenant: 't', operation: 'lease', key, request: { key } }, async () => ({ status: 200, body: {} })),
              journal.begin(`op-${key}`),
            ]);
            const [paid, ...rest] = outcomes;
            if (paid.status === 'fulfilled' && paid.value.kind === 'executed') executed.push(key);
            for (const outcome of [paid, ...rest]) if (outcome.status === 'rejected') failures.push(outcome.reason);
          }
        };
        proxy.storm(40);
        const lanes = Promise.all([0, 1, 2, 3].map(worker));
        await sleep(3_000);
        stop = true;
        await lanes;
        proxy.calm();

        // After the storm the relay drains what committed and the consumer applies every delivery.
        const unpublished = () => outbox.collection.countDocuments({ publishedAt: null });
        for (let waited = 0; waited < 10_000 && ((await unpublished()) > 0 || delivered.length > 0); waited += 100) await sleep(100);
        consumerDone = true;
        await consumer;
        await relay.stop();

        const paidKeys = (await direct.db(dbName).collection<{ key: string }>('payments').find().toArray()).map((row) => row.key);
        const events = (await direct.db(dbName).collection('oncely_outbox').find().toArray()).map((row) => String(row._id));
        const applied = await direct.db(dbName).collection<{ _id: string; n: number }>('effects').find().toArray();
        expect(unheard.errors, 'errors that reached uncaughtException or unhandledRejection').toEqual([]);
        expect(proxy.destroyed, 'connections the storm destroyed').toBeGreaterThan(20);
        expect(failures.length, 'the storm failed some calls').toBeGreaterThan(0);
        expect(failures.filter((failure) => !isStorageError(failure) && !(failure instanceof OwnWriteError)), 'every failure is a StorageError').toEqual([]);
        expect(new Set(paidKeys).size, 'one payment per key').toBe(paidKeys.length);
        for (const key of executed) expect(paidKeys).toContain(key);
        expect(await unpublished(), 'the relay drained the outbox after the storm').toBe(0);
        expect(applied.map((row) => row._id).sort(), 'every committed event applied').toEqual([...events].sort());
        expect(applied.filter((row) => row.n !== 1), 'each exactly once').toEqual([]);
      } finally {
        unheard.stop();
        await proxy.close();
      }
    }, 30_000);
  });
}
