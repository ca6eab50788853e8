import { createIdempotency } from '@oncely/core';
import { drizzleBridge } from '@oncely/postgres/drizzle';
import { uniqueKey } from '@oncely/testkit';
import { sql } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/index.js';
import { DATABASE_URL, migratedSchema, rawRecord } from '../support/database.js';
import { type OpenedDb, paymentsTable } from './cases/bridge-case.js';
import { drizzlePostgresJs } from './cases/drizzle-postgres-js.js';

type Db = PostgresJsDatabase;
type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

// The Drizzle bridge's postgres.js route: the store reserves a connection of the postgres() instance
// under Drizzle, pipelines its read with claim + BEGIN, and hands the handler Drizzle's postgres.js
// transaction over that connection's sql; where that cannot work, the bridge keeps db.transaction.
const { pool, schema, table } = migratedSchema('drizzle_pgjs_held', { max: 2 });
let opened: OpenedDb<Db>;
beforeAll(async () => {
  await pool.query(paymentsTable(schema));
  opened = await drizzlePostgresJs.open(DATABASE_URL, 2, schema);
});
afterAll(() => opened?.close());

const request = (key: string) => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount: 10 } });
const rows = async (key: string) => (await pool.query(`SELECT amount FROM "${schema}".bridge_payments WHERE idem_key = $1 ORDER BY id`, [key])).rows.map((row) => row.amount);
const record = (key: string) => rawRecord(pool, table, { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key });
const pay = (key: string) => async ({ tx }: { tx: Tx }) => ({ status: 201, body: { id: await drizzlePostgresJs.insert(tx, schema, { key, amount: 10 }) } });

describe('drizzle on postgres.js: the transaction oncely opens on a reserved connection, with Drizzle’s tx over its sql', () => {
  it('the handler’s tx is Drizzle’s postgres.js transaction inside the transaction the claim opened, and refuses SQL once the handler is done', async () => {
    const bridge = drizzleBridge<Db>();
    expect(bridge.postgresJs?.sql(opened.db)).toBeDefined();
    const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge, schema }) });
    const key = uniqueKey('held');
    let kept: Tx | undefined;
    const result = await idempotency.runInTransaction(request(key), async ({ tx }) => {
      kept = tx;
      const [mine] = await tx.execute<{ state: string }>(sql`SELECT state FROM ${sql.raw(table)} WHERE idempotency_key = ${key}`);
      await drizzlePostgresJs.insert(tx, schema, { key, amount: 10 });
      return { status: 201, body: { state: mine?.state, kind: tx.constructor.name } };
    });
    expect(result).toMatchObject({ kind: 'executed', response: { body: { state: 'in_progress', kind: 'PostgresJsTransaction' } } });
    // Drizzle wraps the driver's error (Failed query: …) and keeps it as the cause.
    const refused = (await kept!.execute(sql`SELECT 1`).catch((error: unknown) => error)) as Error & { cause?: Error };
    expect(refused.cause?.message ?? refused.message).toMatch(/this transaction has ended/);
    expect(await rows(key)).toEqual([10]);
  });

  it('nested tx.transaction calls are savepoints, to any depth: a rolled-back one goes, the rest commits with the claim', async () => {
    const idempotency = createIdempotency({ store: postgresStore({ db: opened.db, bridge: drizzleBridge<Db>(), schema }) });
    const key = uniqueKey('deep');
    const result = await idempotency.runInTransaction(request(key), async ({ tx }) => {
      await drizzlePostgresJs.insert(tx, schema, { key, amount: 1 });
      await tx.transaction(async (inner) => {
        await drizzlePostgresJs.insert(inner, schema, { key, amount: 2 });
        await inner
          .transaction(async (deeper) => {
            await drizzlePostgresJs.insert(deeper, schema, { key, amount: 3 });
            throw new Error('only the innermost goes');
          })
          .catch(() => undefined);
      });
      return { status: 201 };
    });
    expect(result.kind).toBe('executed');
    expect(await rows(key)).toEqual([1, 2]);
    expect((await record(key))?.state).toBe('succeeded');
  });

  it("an instance with fetch_types: false (postgres.js cannot reserve a connection then) keeps Drizzle's own transaction, and the bridge still works", async () => {
    const client = postgres(DATABASE_URL, { max: 1, fetch_types: false, onnotice: () => undefined });
    const db = drizzle(client);
    try {
      const bridge = drizzleBridge<Db>();
      expect(bridge.postgresJs?.sql(db)).toBeUndefined();
      const idempotency = createIdempotency({ store: postgresStore({ db, bridge, schema }) });
      const key = uniqueKey('no-types');
      expect((await idempotency.runInTransaction(request(key), pay(key))).kind).toBe('executed');
      expect((await idempotency.runInTransaction(request(key), pay(key))).kind).toBe('replayed');
      expect(await rows(key)).toEqual([10]);
    } finally {
      await client.end({ timeout: 5 });
    }
  });

  it('a Drizzle transaction, or Drizzle on node-postgres, has no postgres.js instance to reserve from', async () => {
    const bridge = drizzleBridge();
    await opened.db.transaction(async (tx) => {
      expect(bridge.postgresJs?.sql(tx)).toBeUndefined();
    });
    expect(bridge.postgresJs?.sql(drizzleNodePg(pool))).toBeUndefined();
  });
});
