import { PGlite } from '@electric-sql/pglite';
import { runStoreConformance } from '@oncely/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, postgresStore } from '../../src/index.js';
import { createBusinessTables } from '../support/business.js';
import { rawRecord } from '../support/database.js';
import { transactionalBehaviours } from '../transactional/behaviours.js';

// One embedded database for the file, since starting PGlite takes seconds: the conformance suite
// gets a table per test in `public`, the transactional behaviours their own schema.
const db = new PGlite();
const schema = 'payments';
let tables = 0;

beforeAll(async () => {
  await migrate(db, { schema });
  await createBusinessTables(db, schema);
});
afterAll(() => db.close());

runStoreConformance({ describe, it, expect }, {
  name: 'postgres (PGlite)',
  createStore: async () => {
    const table = `records_${++tables}`;
    await migrate(db, { tables: { oncely_idempotency: table } });
    return postgresStore({ db, table });
  },
  inspect: (store, scope) => rawRecord(db, store.table, scope),
  // PGlite runs every statement in turn on its one connection: its races cannot overlap, so they run small.
  raceSize: 10,
  raceRounds: 4,
});

transactionalBehaviours('PGlite', () => ({ db, schema }));
