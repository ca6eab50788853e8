import { runStoreConformance } from '@oncely/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, postgresStore } from '../../src/index.js';
import { rawRecord, uniqueSchema } from '../support/database.js';
import { createSql } from '../support/postgresjs.js';

const sql = createSql();
const schema = uniqueSchema('conformance_pgjs');
let tables = 0;

afterAll(async () => {
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await sql.end();
});

runStoreConformance({ describe, it, expect }, {
  name: 'postgres (postgres.js)',
  createStore: async () => {
    const table = `records_${++tables}`;
    await migrate(sql, { schema, tables: { oncely_idempotency: table } });
    return postgresStore({ db: sql, schema, table });
  },
  // The caller's own postgres.js transaction, as an application opens it.
  openTransaction: (_store, body) => sql.begin((tx) => body(tx)) as never,
  inspect: (store, scope) => rawRecord({ query: (text, params) => sql.unsafe(text, params as never[]).then((rows) => ({ rows })) }, store.table, scope),
});
