import { createIdempotency } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresOutbox, postgresStore } from '../../src/index.js';
import { DATABASE_URL, migratedSchema, rawRecord } from '../support/database.js';
import { type OpenedDb, paymentsTable } from './cases/bridge-case.js';
import { typeormPg } from './cases/typeorm-pg.js';

// What the shared suite does not: a transaction the application drives itself through a QueryRunner
// (startTransaction / commitTransaction / rollbackTransaction, as NestJS's transactional helpers do).
const { pool, schema, table } = migratedSchema('typeorm_runner', { max: 3 });
let opened: OpenedDb<DataSource>;
beforeAll(async () => {
  await pool.query(paymentsTable(schema));
  opened = (await typeormPg.open(DATABASE_URL, 4, schema)) as OpenedDb<DataSource>;
});
afterAll(() => opened?.close());

const request = (key: string) => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount: 10 } });
const rows = async (key: string) => (await pool.query(`SELECT amount FROM "${schema}".bridge_payments WHERE idem_key = $1 ORDER BY id`, [key])).rows.map((row) => row.amount);
const record = (key: string) => rawRecord(pool, table, { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key });

describe('typeorm: joining a QueryRunner transaction the application opened (runInTransaction(…, { tx: queryRunner.manager }))', () => {
  const store = () => postgresStore({ db: opened.db, bridge: typeormPg.bridge, schema });

  it("the claim, the handler's writes, an outbox event and the saved response commit on the application's commitTransaction, on its connection", async () => {
    const idempotency = createIdempotency({ store: store() });
    const outbox = postgresOutbox({ db: opened.db, bridge: typeormPg.bridge, schema });
    const key = uniqueKey('runner');
    const runner = opened.db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      const appPid = await typeormPg.backendPid(runner.manager);
      const result = await idempotency.runInTransaction(
        request(key),
        async ({ tx }) => {
          expect(await typeormPg.backendPid(tx)).toBe(appPid);
          const id = await typeormPg.insert(tx, schema, { key, amount: 10 });
          await outbox.enqueue(tx, { aggregateType: 'payment', aggregateId: key, eventType: 'payment.created', payload: { id } });
          return { status: 201, body: { id } };
        },
        { tx: runner.manager },
      );
      expect(result.kind).toBe('executed');
      // Not committed yet: nobody else sees the record.
      expect(await record(key)).toBeUndefined();
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    expect(await rows(key)).toEqual([10]);
    expect((await record(key))?.state).toBe('succeeded');
    expect((await pool.query(`SELECT 1 FROM "${schema}".oncely_outbox WHERE aggregate_id = $1`, [key])).rowCount).toBe(1);
    expect((await idempotency.runInTransaction(request(key), async () => ({ status: 500 }))).kind).toBe('replayed');
  });

  it("the application's rollbackTransaction takes the claim with it: the retry executes once", async () => {
    const idempotency = createIdempotency({ store: store() });
    const key = uniqueKey('runner-rollback');
    const runner = opened.db.createQueryRunner();
    await runner.startTransaction();
    try {
      const joined = await idempotency.runInTransaction(request(key), async ({ tx }) => ({ status: 201, body: { id: await typeormPg.insert(tx, schema, { key, amount: 10 }) } }), {
        tx: runner.manager,
      });
      expect(joined.kind).toBe('executed');
      await runner.rollbackTransaction();
    } finally {
      await runner.release();
    }
    expect([await rows(key), await record(key)]).toEqual([[], undefined]);
    expect((await idempotency.runInTransaction(request(key), async ({ tx }) => ({ status: 201, body: { id: await typeormPg.insert(tx, schema, { key, amount: 10 }) } }))).kind).toBe(
      'executed',
    );
    expect(await rows(key)).toEqual([10]);
  });
});
