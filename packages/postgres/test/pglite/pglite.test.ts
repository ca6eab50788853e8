import { PGlite } from '@electric-sql/pglite';
import { runStoreConformance } from '@oncely/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdempotency } from '@oncely/core';
import { migrate, type PostgresTx, postgresStore } from '../../src/index.js';
import { recordingPglite, type Sent } from '../support/recording-pglite.js';
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
  openTransaction: (_store, body) => db.transaction(body),
  // PGlite runs every statement in turn on its one connection: its races cannot overlap, so they run small.
  raceSize: 10,
  raceRounds: 4,
});

transactionalBehaviours('PGlite', () => ({ db, schema }));

describe('PGlite: calls per transactional request', () => {
  it('a replay is one read, outside any transaction', async () => {
    const sent: Sent[] = [];
    const engine = createIdempotency({ store: postgresStore({ db: recordingPglite(db, sent), schema }) });
    const request = { tenant: 'acme', operation: 'payments.create.v1', key: `calls-${Date.now()}`, request: {} };
    const handler = async ({ tx }: { tx: PostgresTx }) => {
      await tx.query('SELECT 1');
      return { status: 201 };
    };
    expect((await engine.runInTransaction(request, handler)).kind).toBe('executed');
    sent.length = 0;
    expect((await engine.runInTransaction(request, handler)).kind).toBe('replayed');
    expect(sent).toEqual([{ text: expect.stringMatching(/^EXECUTE oncely_\w+_s\(/), inTransaction: false }]);
  });
});
