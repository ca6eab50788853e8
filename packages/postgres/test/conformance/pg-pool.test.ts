import { runStoreConformance } from '@oncely/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, postgresStore } from '../../src/index.js';
import { createPool, dropSchema, inClientTransaction, rawRecord, uniqueSchema } from '../support/database.js';

const pool = createPool();
const schema = uniqueSchema('conformance');
let tables = 0;

afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

runStoreConformance({ describe, it, expect }, {
  name: 'postgres (pg.Pool)',
  createStore: async () => {
    const table = `records_${++tables}`;
    await migrate(pool, { schema, tables: { oncely_idempotency: table } });
    return postgresStore({ db: pool, schema, table });
  },
  inspect: (store, scope) => rawRecord(pool, store.table, scope),
  openTransaction: (_store, body) => inClientTransaction(pool, body),
});
