import type { EntityManager } from '@mikro-orm/core';
import { createIdempotency } from '@oncely/core';
import { mikroOrmBridge } from '@oncely/postgres/mikro-orm';
import { uniqueKey } from '@oncely/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/index.js';
import { DATABASE_URL, migratedSchema } from '../support/database.js';
import { type OpenedDb, paymentsTable } from './cases/bridge-case.js';
import { mikroOrmPg } from './cases/mikro-orm-pg.js';

// The MikroORM bridge's pg route: oncely opens the transaction on a connection of the Knex pool under
// MikroORM and hands the handler a fork whose transaction context is Knex's trx over it, at the
// bridge's isolation level if it has one; an em already in a transaction keeps em.transactional.
const { pool, schema } = migratedSchema('mikro_held', { max: 2 });
let opened: OpenedDb<EntityManager>;
beforeAll(async () => {
  await pool.query(paymentsTable(schema));
  opened = await mikroOrmPg.open(DATABASE_URL, 2, schema);
});
afterAll(() => opened?.close());

const request = (key: string) => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount: 10 } });
const isolation = async (tx: EntityManager) =>
  (await tx.getConnection().execute<{ transaction_isolation: string }[]>('SHOW transaction_isolation', [], 'all', tx.getTransactionContext()))[0]!
    .transaction_isolation;

describe('mikro-orm 6 on pg: the transaction oncely opens, with a fork over its connection', () => {
  it("the handler's fork is inside the transaction the claim opened, and its context has ended once the handler is done", async () => {
    const bridge = mikroOrmBridge();
    expect(bridge.pg?.pool(opened.db)).toBeDefined();
    const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge, schema }) });
    const key = uniqueKey('held');
    let kept: EntityManager | undefined;
    const result = await idempotency.runInTransaction(request(key), async ({ tx }) => {
      kept = tx;
      const [mine] = await tx
        .getConnection()
        .execute<{ state: string }[]>(`SELECT state FROM "${schema}".oncely_idempotency WHERE idempotency_key = ?`, [key], 'all', tx.getTransactionContext());
      await mikroOrmPg.insert(tx, schema, { key, amount: 10 });
      return { status: 201, body: { state: mine?.state } };
    });
    expect(result).toMatchObject({ kind: 'executed', response: { body: { state: 'in_progress' } } });
    expect(kept!.getTransactionContext<{ isCompleted(): boolean }>()?.isCompleted()).toBe(true);
  });

  it('an isolation level opens oncely\'s transaction at it, on the held route; an em already in a transaction keeps em.transactional', async () => {
    const bridge = mikroOrmBridge({ isolationLevel: 'serializable' as never });
    expect(bridge.pg?.pool(opened.db)).toBeDefined();
    expect(bridge.pg?.isolationLevel?.(opened.db)).toBe('serializable');
    const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge, schema }) });
    const result = await idempotency.runInTransaction(request(uniqueKey('iso')), async ({ tx }) => ({ status: 201, body: { level: await isolation(tx) } }));
    expect(result).toMatchObject({ kind: 'executed', response: { body: { level: 'serializable' } } });
    await opened.db.fork().transactional(async (em) => {
      expect(mikroOrmBridge().pg?.pool(em)).toBeUndefined();
    });
  });
});
