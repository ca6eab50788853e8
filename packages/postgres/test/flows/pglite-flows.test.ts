import { PGlite } from '@electric-sql/pglite';
import { runFlowConformance } from '@oncely/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, type PostgresStore, type PostgresTx, postgresStore } from '../../src/index.js';

// One embedded database for the file (PGlite takes seconds to start), a record table per test.
const db = new PGlite();
let tables = 0;
afterAll(() => db.close());

runFlowConformance<PostgresStore, PostgresTx>({ describe, it, expect }, {
  name: 'postgres (PGlite)',
  createStore: async () => {
    const table = `flow_records_${++tables}`;
    await migrate(db, { tables: { oncely_idempotency: table } });
    await db.query(`CREATE TABLE ${table}_writes (label text NOT NULL)`);
    return postgresStore({ db, table });
  },
  write: async (tx, label) => {
    await tx.query(`INSERT INTO flow_records_${tables}_writes (label) VALUES ($1)`, [label]);
  },
  count: async (store, label) => {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${store.table.replace(/"$/, '_writes"')} WHERE label = $1`, [label]);
    return (rows[0] as { n: number }).n;
  },
});
