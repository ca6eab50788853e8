import { createIdempotency } from '@oncely/core';
import { typeormBridge } from '@oncely/postgres/typeorm';
import { uniqueKey } from '@oncely/testkit';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/index.js';
import { DATABASE_URL, migratedSchema } from '../support/database.js';
import { type OpenedDb, paymentsTable } from './cases/bridge-case.js';
import { typeormPg } from './cases/typeorm-pg.js';

// The TypeORM bridge's pg route: oncely opens the transaction on a connection of TypeORM's pool and
// hands the handler the manager of a runner built over it (typeorm-held-runner.ts); where the shape
// or the options do not fit, the bridge keeps TypeORM's own manager.transaction.
const { pool, schema } = migratedSchema('typeorm_held', { max: 2 });
let opened: OpenedDb<DataSource>;
beforeAll(async () => {
  await pool.query(paymentsTable(schema));
  opened = (await typeormPg.open(DATABASE_URL, 2, schema)) as OpenedDb<DataSource>;
});
afterAll(() => opened?.close());

const request = (key: string) => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount: 10 } });
const isolation = async (tx: EntityManager) => ((await tx.query('SHOW transaction_isolation')) as { transaction_isolation: string }[])[0]!.transaction_isolation;

describe('typeorm on pg: the transaction oncely opens, with TypeORM’s manager over its connection', () => {
  it('the handler runs inside the transaction the claim opened: it sees its own in-progress record, on a runner TypeORM counts as in a transaction', async () => {
    const bridge = typeormBridge();
    expect(bridge.pg?.pool(opened.db)).toBeDefined();
    const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge, schema }) });
    const key = uniqueKey('held');
    const result = await idempotency.runInTransaction(request(key), async ({ tx }) => {
      expect(tx.queryRunner?.isTransactionActive).toBe(true);
      const [mine] = (await tx.query(`SELECT state FROM "${schema}".oncely_idempotency WHERE idempotency_key = $1`, [key])) as { state: string }[];
      await typeormPg.insert(tx, schema, { key, amount: 10 });
      return { status: 201, body: { state: mine?.state } };
    });
    expect(result).toMatchObject({ kind: 'executed', response: { body: { state: 'in_progress' } } });
  });

  it('a manager kept past the handler refuses SQL: its runner is released before the connection goes back to the pool', async () => {
    const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge: typeormBridge(), schema }) });
    let kept: EntityManager | undefined;
    const key = uniqueKey('kept');
    await idempotency.runInTransaction(request(key), async ({ tx }) => {
      kept = tx;
      return { status: 201 };
    });
    await expect(kept!.query('SELECT 1')).rejects.toThrow(/released/i);
  });

  it("an isolation level (the bridge's option or the DataSource's) opens oncely's transaction at it, on the held route", async () => {
    const bridge = typeormBridge({ isolationLevel: 'SERIALIZABLE' });
    expect(bridge.pg?.pool(opened.db)).toBeDefined();
    expect(bridge.pg?.isolationLevel?.(opened.db)).toBe('SERIALIZABLE');
    const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge, schema }) });
    const result = await idempotency.runInTransaction(request(uniqueKey('iso')), async ({ tx }) => ({ status: 201, body: { level: await isolation(tx) } }));
    expect(result).toMatchObject({ kind: 'executed', response: { body: { level: 'serializable' } } });

    const { DataSource: Source } = await import('typeorm');
    const repeatable = await new Source({ type: 'postgres', url: DATABASE_URL, poolSize: 1, isolationLevel: 'REPEATABLE READ' }).initialize();
    try {
      expect(typeormBridge().pg?.pool(repeatable)).toBeDefined();
      expect(typeormBridge().pg?.isolationLevel?.(repeatable)).toBe('REPEATABLE READ');
      const onIt = createIdempotency({ store: postgresStore({ db: repeatable, bridge: typeormBridge(), schema }) });
      const again = await onIt.runInTransaction(request(uniqueKey('iso-ds')), async ({ tx }) => ({ status: 201, body: { level: await isolation(tx) } }));
      expect(again).toMatchObject({ kind: 'executed', response: { body: { level: 'repeatable read' } } });
    } finally {
      await repeatable.destroy();
    }
  });

  it("a query runner of another shape than TypeORM 1.x's (no isReleased flag) keeps TypeORM's own transaction, and the bridge still works", async () => {
    const { DataSource: Source } = await import('typeorm');
    const other = await new Source({ type: 'postgres', url: DATABASE_URL, poolSize: 1 }).initialize();
    try {
      const create = other.createQueryRunner.bind(other);
      other.createQueryRunner = (mode?: 'master' | 'slave'): QueryRunner => Object.assign(create(mode), { isReleased: undefined });
      const bridge = typeormBridge();
      expect(bridge.pg?.pool(other)).toBeUndefined();
      const idempotency = createIdempotency({ store: postgresStore({ db: other, bridge, schema }) });
      const key = uniqueKey('shape');
      const pay = async ({ tx }: { tx: EntityManager }) => ({ status: 201, body: { id: await typeormPg.insert(tx, schema, { key, amount: 10 }) } });
      expect((await idempotency.runInTransaction(request(key), pay)).kind).toBe('executed');
      expect((await idempotency.runInTransaction(request(key), pay)).kind).toBe('replayed');
    } finally {
      await other.destroy();
    }
  });

  it("a manager already bound to a runner as db keeps TypeORM's path (it nests in that runner)", async () => {
    const runner = opened.db.createQueryRunner();
    try {
      expect(typeormBridge().pg?.pool(runner.manager)).toBeUndefined();
      expect(typeormBridge().pg?.pool(opened.db.manager)).toBeDefined();
    } finally {
      await runner.release();
    }
  });
});
