import { runFlowConformance } from '@oncely/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, type PostgresDb, type PostgresStore, type PostgresTx, postgresStore } from '../../src/index.js';
import { createPool, dropSchema, uniqueSchema } from '../support/database.js';
import { createSql } from '../support/postgresjs.js';

const pool = createPool();
const sql = createSql({ max: 4 });
const schema = uniqueSchema('flows');
let tables = 0;

afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
  await sql.end();
});

/** Test-side SQL on the database under test, whichever driver it is. */
type Query = (text: string, params?: unknown[]) => Promise<{ rows: unknown[] }>;

/** Each store's business table, where its phases' writes land. */
const writes = new WeakMap<PostgresStore, string>();
/** The business table of the test running now: the tests of a file run one after another. */
let current = '';

const flowSuite = (name: string, db: PostgresDb, where: string, query: Query) =>
  runFlowConformance<PostgresStore, PostgresTx>({ describe, it, expect }, {
    name,
    createStore: async () => {
      const table = `flow_records_${++tables}`;
      await migrate(db, { schema: where, tables: { oncely_idempotency: table } });
      current = `"${where}"."${table}_writes"`;
      await query(`CREATE TABLE ${current} (label text NOT NULL)`);
      const store = postgresStore({ db, schema: where, table });
      writes.set(store, current);
      return store;
    },
    write: async (tx, label) => {
      await tx.query(`INSERT INTO ${current} (label) VALUES ($1)`, [label]);
    },
    count: async (store, label) => {
      const { rows } = await query(`SELECT count(*)::int AS n FROM ${writes.get(store)} WHERE label = $1`, [label]);
      return (rows[0] as { n: number }).n;
    },
  });

flowSuite('postgres (pg.Pool)', pool, schema, (text, params) => pool.query(text, params));
flowSuite('postgres (postgres.js)', sql, schema, async (text, params) => ({ rows: await sql.unsafe(text, params as never[]) }));
