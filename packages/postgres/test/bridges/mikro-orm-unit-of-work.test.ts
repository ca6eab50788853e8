import type { EntityManager } from '@mikro-orm/core';
import { createIdempotency, isOncelyError } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresOutbox, postgresStore } from '../../src/index.js';
import { DATABASE_URL, migratedSchema, rawRecord } from '../support/database.js';
import { type OpenedDb, paymentsTable } from './cases/bridge-case.js';
import { mikroOrmPg, Payment } from './cases/mikro-orm-pg.js';

// What the shared suite does not: MikroORM's unit of work (entities persisted but not yet flushed
// when the handler returns), a transaction opened with em.begin() and joined, and an EntityManager
// used after its transaction ended.
const { pool, schema, table } = migratedSchema('mikro_orm_uow', { max: 3 });
let opened: OpenedDb<EntityManager>;
beforeAll(async () => {
  await pool.query(paymentsTable(schema));
  opened = await mikroOrmPg.open(DATABASE_URL, 4, schema);
});
afterAll(() => opened?.close());

const request = (key: string) => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount: 10 } });
const rows = async (key: string) => (await pool.query(`SELECT amount FROM "${schema}".bridge_payments WHERE idem_key = $1 ORDER BY id`, [key])).rows.map((row) => row.amount);
const record = (key: string) => rawRecord(pool, table, { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key });

describe('mikro-orm 6: the unit of work and explicit transactions', () => {
  const idempotency = () => createIdempotency({ store: postgresStore({ db: opened.db, bridge: mikroOrmPg.bridge, schema }) });

  it('an entity persisted but not flushed by the handler is flushed by em.transactional before COMMIT, with the saved response', async () => {
    const key = uniqueKey('unflushed');
    const result = await idempotency().runInTransaction(request(key), async ({ tx }) => {
      tx.create(Payment, { key, amount: 10 }, { schema });
      return { status: 202 };
    });
    expect(result.kind).toBe('executed');
    expect(await rows(key)).toEqual([10]);
    expect((await record(key))?.state).toBe('succeeded');
  });

  it('a flush that fails at the end of the transaction rolls back the saved response too: no record, the error reaches the caller', async () => {
    const key = uniqueKey('bad-flush');
    const thrown = await idempotency()
      .runInTransaction(request(key), async ({ tx }) => {
        // Out of range for the integer column: the INSERT of the flush em.transactional runs before COMMIT fails on the server.
        tx.create(Payment, { key, amount: 2 ** 40 }, { schema });
        return { status: 202 };
      })
      .catch((error: unknown) => error);
    // The failure comes after the saved response, at the end of the ORM's transaction: a StorageError naming the commit.
    expect(isOncelyError(thrown) && thrown.code).toBe('storage_error');
    expect(String(thrown)).toMatch(/commit failed: .*integer out of range/);
    expect([await rows(key), await record(key)]).toEqual([[], undefined]);
  });

  it('a transaction opened with em.begin() is joined, and commits with em.commit()', async () => {
    const key = uniqueKey('begin');
    const em = opened.db.fork();
    await em.begin();
    const joined = await idempotency().runInTransaction(request(key), async ({ tx }) => ({ status: 201, body: { id: await mikroOrmPg.insert(tx, schema, { key, amount: 10 }) } }), {
      tx: em,
    });
    expect(joined.kind).toBe('executed');
    expect(await record(key)).toBeUndefined();
    await em.commit();
    expect(await rows(key)).toEqual([10]);
    expect((await record(key))?.state).toBe('succeeded');
  });

  it('an EntityManager whose transaction has ended is refused (invalid_state) before any SQL: its connection may serve someone else', async () => {
    const key = uniqueKey('ended');
    const outbox = postgresOutbox({ db: opened.db, bridge: mikroOrmPg.bridge, schema });
    let kept: EntityManager | undefined;
    await opened.db.transactional(async (tx) => {
      kept = tx;
    });
    const thrown = await outbox.enqueue(kept!, { aggregateType: 'payment', aggregateId: key, eventType: 'payment.created', payload: {} }).catch((error: unknown) => error);
    expect(isOncelyError(thrown) ? thrown.code : thrown).toBe('invalid_state');
    expect((await pool.query(`SELECT 1 FROM "${schema}".oncely_outbox WHERE aggregate_id = $1`, [key])).rowCount).toBe(0);
  });
});
