import { createIdempotency } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeScopeId, type MongoTransactionalStore, mongoTransactionalStore } from '../../src/index.js';
import { DRIVERS, realServer, suiteTitle, testDatabaseName, transactionServer } from '../support/real-server.js';

const server = await transactionServer(
  'mongodb runInTransaction: 200-way race, rollback, commit together (real replica set)',
  realServer('mongodb runInTransaction (real server)'),
);

for (const { name, MongoClient } of DRIVERS) {
  describe.skipIf(server.kind === 'skipped')(suiteTitle(`mongodb runInTransaction on a real replica set (${name})`, server), () => {
    const dbName = testDatabaseName('tx');
    let client: MongoClient;
    let store: MongoTransactionalStore;
    beforeAll(async () => {
      client = new MongoClient(server.kind === 'available' ? server.url : 'mongodb://unused');
      await client.connect();
      store = await mongoTransactionalStore({ client, dbName, lockWaitMs: 30_000 });
      await store.ensureIndexes();
      await client.db(dbName).createCollection('payments');
    });
    afterAll(async () => {
      await client.db(dbName).dropDatabase();
      await client.close();
    });

    const payments = () => client.db(dbName).collection<{ key: string; amount: number }>('payments');
    const request = (key: string, amount = 10) => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount } });
    const rawRecord = (key: string) =>
      store.collection.findOne({ _id: encodeScopeId({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key }) });

    it('200 concurrent duplicates execute once and leave exactly one payment; the rest replay it', async () => {
      const engine = createIdempotency({ store });
      const key = uniqueKey('tx-race');
      let executions = 0;
      const results = await Promise.all(
        Array.from({ length: 200 }, () =>
          engine.runInTransaction(request(key), async ({ tx }) => {
            executions++;
            const { insertedId } = await payments().insertOne({ key, amount: 10 }, { session: tx });
            return { status: 201, body: { id: String(insertedId) } };
          }),
        ),
      );
      expect(executions).toBe(1);
      expect(await payments().countDocuments({ key })).toBe(1);
      const executed = results.filter((r) => r.kind === 'executed');
      expect(executed).toHaveLength(1);
      const id = executed[0]!.kind === 'executed' ? executed[0]!.response.body : undefined;
      for (const r of results) {
        expect(['executed', 'replayed']).toContain(r.kind);
        if (r.kind === 'replayed') expect(r.response.body).toEqual(id);
      }
    });

    it('the saved outcome and the business write commit together', async () => {
      const engine = createIdempotency({ store });
      const key = uniqueKey('tx-commit');
      await engine.runInTransaction(request(key), async ({ tx }) => {
        await payments().insertOne({ key, amount: 10 }, { session: tx });
        return { status: 201, body: { ok: true } };
      });
      expect(await payments().countDocuments({ key })).toBe(1);
      const raw = await rawRecord(key);
      expect(raw?.state).toBe('succeeded');
      expect(raw?.token).toBeUndefined();
    });

    it('a handler that throws rolls back its payment and the claim; the retry executes', async () => {
      const engine = createIdempotency({ store });
      const key = uniqueKey('tx-throw');
      await expect(
        engine.runInTransaction(request(key), async ({ tx }) => {
          await payments().insertOne({ key, amount: 10 }, { session: tx });
          throw new Error('card network down');
        }),
      ).rejects.toThrow('card network down');
      expect(await payments().countDocuments({ key })).toBe(0);
      expect(await rawRecord(key)).toBeNull();
      const retry = await engine.runInTransaction(request(key), async ({ tx }) => {
        await payments().insertOne({ key, amount: 10 }, { session: tx });
        return { status: 201 };
      });
      expect(retry.kind).toBe('executed');
      expect(await payments().countDocuments({ key })).toBe(1);
    });

    it('a 5xx under the default policy is rolled back: no payment, no record', async () => {
      const engine = createIdempotency({ store });
      const key = uniqueKey('tx-5xx');
      const result = await engine.runInTransaction(request(key), async ({ tx }) => {
        await payments().insertOne({ key, amount: 10 }, { session: tx });
        return { status: 503 };
      });
      expect(result).toEqual({ kind: 'executed', response: { status: 503 }, state: 'released' });
      expect(await payments().countDocuments({ key })).toBe(0);
      expect(await rawRecord(key)).toBeNull();
    });

    it('the same key with a different amount is a mismatch and writes nothing', async () => {
      const engine = createIdempotency({ store });
      const key = uniqueKey('tx-mismatch');
      await engine.runInTransaction(request(key, 10), async ({ tx }) => {
        await payments().insertOne({ key, amount: 10 }, { session: tx });
        return { status: 201 };
      });
      const second = await engine.runInTransaction(request(key, 100), async ({ tx }) => {
        await payments().insertOne({ key, amount: 100 }, { session: tx });
        return { status: 201 };
      });
      expect(second).toEqual({ kind: 'mismatch' });
      expect(await payments().find({ key }).map((p) => p.amount).toArray()).toEqual([10]);
    });
  });
}
