import { PGlite } from '@electric-sql/pglite';
import { type InboxSetup, type InboxUnderTest, runInboxConformance, uniqueKey } from '@oncely/testkit';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, type PostgresDb, type PostgresTx, postgresInbox, sqlDriver } from '../../src/index.js';
import { createPool, DATABASE_URL, dropSchema, uniqueSchema } from '../support/database.js';
import { createSql } from '../support/postgresjs.js';

const pool = createPool({ max: 12 });
const schema = uniqueSchema('inboxes');

afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

const plain = (label: string) => uniqueKey(label).replace(/[^a-z0-9]/gi, '_');

/** A fresh inbox table and the consumer's business table (a counter per event), both in `schemaName`. */
async function inboxUnderTest(db: PostgresDb, schemaName: string, setup: InboxSetup): Promise<InboxUnderTest<PostgresTx>> {
  const driver = sqlDriver(db);
  const table = plain('inbox');
  await migrate(db, { schema: schemaName, tables: { oncely_inbox: table } });
  const credits = `"${schemaName}"."${plain('credits')}"`;
  await driver.query(`CREATE TABLE ${credits} (event_id text PRIMARY KEY, times int NOT NULL)`);
  return {
    inbox: postgresInbox({ db, schema: schemaName, table, onEvent: setup.onEvent, clock: setup.clock }),
    transaction: (work) => driver.transaction(async (tx) => ({ action: 'commit', value: await work(tx) })),
    apply: async (tx, id) =>
      void (await tx.query(
        `INSERT INTO ${credits} (event_id, times) VALUES ($1, 1) ON CONFLICT (event_id) DO UPDATE SET times = ${credits}.times + 1`,
        [id],
      )),
    applied: async (id) => Number((await driver.query<{ times: number }>(`SELECT times FROM ${credits} WHERE event_id = $1`, [id])).rows[0]?.times ?? 0),
  };
}

runInboxConformance({ describe, it, expect }, {
  name: 'postgres inbox (pg.Pool)',
  createInbox: (setup) => inboxUnderTest(pool, schema, setup),
});

describe('postgres inbox: a single pg.Client', () => {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  const connected = client.connect();
  afterAll(() => client.end());
  runInboxConformance({ describe, it, expect }, {
    name: 'postgres inbox (pg.Client)',
    concurrentTransactions: false,
    createInbox: async (setup) => {
      await connected;
      return inboxUnderTest(client, schema, setup);
    },
  });
});

describe('postgres inbox: PGlite', () => {
  const db = new PGlite();
  afterAll(() => db.close());
  runInboxConformance({ describe, it, expect }, {
    name: 'postgres inbox (PGlite)',
    concurrentTransactions: false,
    createInbox: (setup) => inboxUnderTest(db, 'public', setup),
  });
});

describe('postgres inbox: postgres.js', () => {
  const sql = createSql({ max: 12 });
  afterAll(() => sql.end());
  runInboxConformance({ describe, it, expect }, {
    name: 'postgres inbox (postgres.js)',
    createInbox: (setup) => inboxUnderTest(sql, schema, setup),
  });
});
