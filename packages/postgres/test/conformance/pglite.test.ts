import { PGlite } from '@electric-sql/pglite';
import { runStoreConformance } from '@oncely/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, postgresStore } from '../../src/index.js';
import { rawRecord } from '../support/database.js';

// One embedded database for the file (starting PGlite takes seconds); one table per test.
const db = new PGlite();
let tables = 0;

afterAll(() => db.close());

runStoreConformance({ describe, it, expect }, {
  name: 'postgres (PGlite)',
  createStore: async () => {
    const table = `records_${++tables}`;
    await migrate(db, { tables: { oncely_idempotency: table } });
    return postgresStore({ db, table });
  },
  inspect: (store, scope) => rawRecord(db, store.table, scope),
});
