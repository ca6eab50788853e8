import { PGlite } from '@electric-sql/pglite';
import { isStorageError } from '@oncely/core';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { runJournalConformance } from '@oncely/testkit';
import { migrate, postgresJournal } from '../../src/index.js';
import { createPool, DATABASE_URL, dropSchema, uniqueSchema } from '../support/database.js';
import { createSql } from '../support/postgresjs.js';

const pool = createPool();
const schema = uniqueSchema('journal');
let tables = 0;

/** A journal table of its own per test: the listing tests count every entry of their journal. */
async function freshTable(db: Parameters<typeof migrate>[0], inSchema = schema): Promise<string> {
  const table = `journal_${++tables}`;
  await migrate(db, { schema: inSchema, tables: { oncely_journal: table } });
  return table;
}

afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

runJournalConformance({ describe, it, expect }, {
  name: 'postgres journal (pg.Pool)',
  createJournal: async () => postgresJournal({ db: pool, schema, table: await freshTable(pool) }),
  // A new pool proves the entry is in the database, not in this process.
  reopen: async (journal) => {
    const other = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    const table = journal.table.split('.')[1]!.replaceAll('"', '');
    return { ...postgresJournal({ db: other, schema, table }), close: () => other.end() };
  },
});

describe('postgres journal: a single pg.Client', () => {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  const connected = client.connect();
  afterAll(() => client.end());
  runJournalConformance({ describe, it, expect }, {
    name: 'postgres journal (pg.Client)',
    createJournal: async () => {
      await connected;
      return postgresJournal({ db: client, schema, table: await freshTable(client) });
    },
    numRuns: 10,
  });
});

describe('postgres journal: postgres.js', () => {
  const sql = createSql({ max: 4 });
  afterAll(() => sql.end());
  runJournalConformance({ describe, it, expect }, {
    name: 'postgres journal (postgres.js)',
    createJournal: async () => postgresJournal({ db: sql, schema, table: await freshTable(sql) }),
    // A new postgres.js instance proves the entry is in the database, not in this process.
    reopen: async (journal) => {
      const other = createSql({ max: 2 });
      const table = journal.table.split('.')[1]!.replaceAll('"', '');
      return { ...postgresJournal({ db: other, schema, table }), close: () => other.end() };
    },
    numRuns: 10,
  });
});

describe('postgres journal: PGlite', () => {
  const db = new PGlite();
  afterAll(() => db.close());
  runJournalConformance({ describe, it, expect }, {
    name: 'postgres journal (PGlite)',
    createJournal: async () => postgresJournal({ db, table: await freshTable(db, 'public') }),
    numRuns: 10,
  });
});

describe('postgres journal: storage', () => {
  it('writes one row per operation, with the key and JSON text exactly as recorded', async () => {
    const table = await freshTable(pool);
    const journal = postgresJournal({ db: pool, schema, table });
    const { entry } = await journal.begin('order-1', { request: { b: 1, a: 'naïve ✓' } });
    await journal.recordAttempt('order-1');
    await journal.complete('order-1', { state: 'succeeded', value: { id: 'pay_1', nul: '\u0000' } });
    const { rows } = await pool.query(`SELECT * FROM "${schema}"."${table}"`);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      operation_id: 'order-1',
      idempotency_key: entry.key,
      state: 'succeeded',
      attempts: 1,
      request_json: '{"b":1,"a":"naïve ✓"}',
      outcome_json: '{"id":"pay_1","nul":"\\u0000"}',
      last_error: null,
    });
  });

  it('the table refuses states outside the contract', async () => {
    const table = await freshTable(pool);
    const insert = pool.query(
      `INSERT INTO "${schema}"."${table}" (operation_id, idempotency_key, state) VALUES ('x', 'k', 'done')`,
    );
    await expect(insert).rejects.toThrow(/check constraint/);
  });

  it('a missing table is a StorageError, never a silent miss', async () => {
    const journal = postgresJournal({ db: pool, schema, table: 'no_such_journal' });
    const error = await journal.begin('order-x').catch((caught: unknown) => caught);
    expect(isStorageError(error)).toBe(true);
  });

  it('rejects a table name that is not a plain identifier', () => {
    expect(() => postgresJournal({ db: pool, table: 'journal; DROP TABLE x' })).toThrow(/plain identifier/);
  });
});
