import { createIdempotency } from '@oncely/core';
import { knexBridge } from '@oncely/postgres/knex';
import { uniqueKey } from '@oncely/testkit';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/index.js';
import { DATABASE_URL, migratedSchema, rawRecord } from '../support/database.js';
import { type OpenedDb, paymentsTable } from './cases/bridge-case.js';
import { knexCase } from './cases/knex.js';
import { refusedOpening } from './cases/refused-opening.js';

// The Knex bridge's pg route: oncely opens the transaction on a connection of Knex's pool and hands
// the handler Knex's own trx over it, whose BEGIN; and final COMMIT; are answered locally
// (knex-held-transaction.ts); where Knex is not on pg, the bridge keeps knex.transaction.
const { pool, schema, table } = migratedSchema('knex_held', { max: 2 });
let opened: OpenedDb<Knex>;
beforeAll(async () => {
  await pool.query(paymentsTable(schema));
  opened = await knexCase.open(DATABASE_URL, 2, schema);
});
afterAll(() => opened?.close());

const request = (key: string) => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount: 10 } });
const rows = async (key: string) => (await pool.query(`SELECT amount FROM "${schema}".bridge_payments WHERE idem_key = $1`, [key])).rows.map((row) => row.amount);
const record = (key: string) => rawRecord(pool, table, { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key });

describe('knex on pg: the transaction oncely opens, with Knex’s trx over its connection', () => {
  it('the handler’s trx is inside the transaction the claim opened (it sees its own in-progress record), and refuses SQL once the handler is done', async () => {
    const bridge = knexBridge();
    expect(bridge.pg?.pool(opened.db)).toBeDefined();
    const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge, schema }) });
    const key = uniqueKey('held');
    let kept: Knex.Transaction | undefined;
    const result = await idempotency.runInTransaction(request(key), async ({ tx }) => {
      kept = tx;
      const { rows: mine } = await tx.raw<{ rows: { state: string }[] }>(`SELECT state FROM ${table} WHERE idempotency_key = ?`, [key]);
      await knexCase.insert(tx, schema, { key, amount: 10 });
      return { status: 201, body: { state: mine[0]?.state } };
    });
    expect(result).toMatchObject({ kind: 'executed', response: { body: { state: 'in_progress' } } });
    expect(kept!.isCompleted()).toBe(true);
    await expect(kept!.raw('SELECT 1')).rejects.toThrow(/already complete/);
    expect(await rows(key)).toEqual([10]);
  });

  it('a Knex whose transaction does not open with BEGIN; is refused with a clear error, nothing kept', async () => {
    const { default: knex } = await import('knex');
    const other = knex({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
    try {
      // Stands in for a Knex version that opens differently: every transaction READ ONLY (BEGIN TRANSACTION READ ONLY;).
      const client = other.client as { transaction(container: unknown, config: object | undefined, outer: unknown): unknown };
      const create = client.transaction.bind(client);
      client.transaction = (container, config, outer) => create(container, { ...config, readOnly: true }, outer);
      const idempotency = createIdempotency({ store: postgresStore({ db: other, bridge: knexBridge(), schema }) });
      const key = uniqueKey('not-begin');
      const { message, ran } = await refusedOpening(idempotency, request(key));
      expect(message).toMatch(/expected Knex to open its transaction with BEGIN;/);
      expect([ran, await record(key)]).toEqual([false, undefined]);
    } finally {
      await other.destroy();
    }
  });

  it("a Knex client that is not node-postgres keeps Knex's own knex.transaction, and the bridge still works", async () => {
    const { default: knex } = await import('knex');
    const other = knex({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
    try {
      Object.defineProperty(other.client, 'driverName', { value: 'pg-native' });
      const bridge = knexBridge();
      expect(bridge.pg?.pool(other)).toBeUndefined();
      const idempotency = createIdempotency({ store: postgresStore({ db: other, bridge, schema }) });
      const key = uniqueKey('fallback');
      const pay = async ({ tx }: { tx: Knex.Transaction }) => ({ status: 201, body: { id: await knexCase.insert(tx, schema, { key, amount: 10 }) } });
      expect((await idempotency.runInTransaction(request(key), pay)).kind).toBe('executed');
      expect((await idempotency.runInTransaction(request(key), pay)).kind).toBe('replayed');
      expect(await rows(key)).toEqual([10]);
    } finally {
      await other.destroy();
    }
  });
});
