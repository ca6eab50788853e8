import { PGlite } from '@electric-sql/pglite';
import { type OutboxWriterUnderTest, runOutboxConformance, uniqueKey } from '@oncely/testkit';
import pg from 'pg';
import type postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { type PostgresDb, type PostgresTx, postgresOutbox, sqlDriver } from '../../src/index.js';
import { createPool, DATABASE_URL, dropSchema, uniqueSchema } from '../support/database.js';
import { createSql } from '../support/postgresjs.js';
import { freshOutboxTable } from './outbox-support.js';

const pool = createPool({ max: 12 });
const schema = uniqueSchema('writer');

afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

/** A fresh outbox table and a business table of the caller's own, both in `schemaName`. */
async function writerUnderTest(db: PostgresDb, schemaName: string): Promise<OutboxWriterUnderTest<PostgresTx>> {
  const driver = sqlDriver(db);
  const outbox = postgresOutbox({ db, schema: schemaName, table: await freshOutboxTable(db, schemaName) });
  const orders = `"${schemaName}"."${uniqueKey('orders').replace(/[^a-z0-9]/gi, '_')}"`;
  await driver.query(`CREATE TABLE ${orders} (id text PRIMARY KEY)`);
  return {
    outbox,
    transaction: (work) => driver.transaction(async (tx) => ({ action: 'commit', value: await work(tx) })),
    write: async (tx, id) => void (await tx.query(`INSERT INTO ${orders} (id) VALUES ($1)`, [id])),
    read: async (id) => (await driver.query(`SELECT 1 FROM ${orders} WHERE id = $1`, [id])).rows.length === 1,
  };
}

runOutboxConformance({ describe, it, expect }, {
  name: 'postgres outbox (pg.Pool)',
  createOutbox: () => writerUnderTest(pool, schema),
});

describe('postgres outbox writer: a single pg.Client', () => {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  const connected = client.connect();
  afterAll(() => client.end());
  runOutboxConformance({ describe, it, expect }, {
    name: 'postgres outbox (pg.Client)',
    // One connection: a read while a transaction is open would wait for that transaction.
    concurrentTransactions: false,
    createOutbox: async () => {
      await connected;
      return writerUnderTest(client, schema);
    },
  });
});

describe('postgres outbox writer: PGlite', () => {
  const db = new PGlite();
  afterAll(() => db.close());
  runOutboxConformance({ describe, it, expect }, {
    name: 'postgres outbox (PGlite)',
    concurrentTransactions: false,
    createOutbox: () => writerUnderTest(db, 'public'),
  });
});

describe('postgres outbox writer: postgres.js, in its own sql.begin transactions', () => {
  const sql = createSql({ max: 12 });
  afterAll(() => sql.end());
  runOutboxConformance({ describe, it, expect }, {
    name: 'postgres outbox (postgres.js)',
    createOutbox: async () => {
      const outbox = postgresOutbox({ db: sql, schema, table: await freshOutboxTable(sql, schema) });
      const orders = `"${schema}"."${uniqueKey('orders').replace(/[^a-z0-9]/gi, '_')}"`;
      await sql.unsafe(`CREATE TABLE ${orders} (id text PRIMARY KEY)`);
      // The caller's tx is postgres.js's own TransactionSql: enqueue writes through it, tagged templates write beside it.
      const writer: OutboxWriterUnderTest<postgres.TransactionSql> = {
        outbox,
        transaction: (work) => sql.begin((tx) => work(tx)) as never,
        write: async (tx, id) => void (await tx.unsafe(`INSERT INTO ${orders} (id) VALUES ($1)`, [id])),
        read: async (id) => (await sql.unsafe(`SELECT 1 FROM ${orders} WHERE id = $1`, [id])).length === 1,
      };
      return writer as unknown as OutboxWriterUnderTest<PostgresTx>;
    },
  });
});
