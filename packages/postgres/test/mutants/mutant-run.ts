import { type RecordedTest, recordSuite, runStoreConformance, type TestRunner } from '@oncely/testkit';
import { afterAll } from 'vitest';
import { migrate, postgresStore } from '../../src/index.js';
import { createPool, dropSchema, inClientTransaction, rawRecord, uniqueSchema } from '../support/database.js';
import type { Mutant } from './corpus.js';
import { type MutatedPool, mutatedPool } from './mutated-pool.js';

/**
 * A runner of the store suite against mutants, on a schema of its own that it drops after the file.
 * The returned `run` gives the suite (or the tests of `clauses`) the real PostgreSQL store with the
 * mutant's one bug; every store gets its own table and its own cold pool, as a new process would.
 */
export function mutantRunner(label: string) {
  const admin = createPool({ max: 2 });
  const schema = uniqueSchema(label);
  let tables = 0;
  let migrated: Promise<unknown> | undefined;
  afterAll(async () => {
    await dropSchema(admin, schema);
    await admin.end();
  });

  return async function run(
    expect: unknown,
    mutant: Mutant | undefined,
    over: { readonly clauses?: readonly string[]; readonly raceRounds?: number; readonly raceSize?: number } = {},
  ): Promise<{ tests: RecordedTest[]; applied: number }> {
    migrated ??= migrate(admin, { schema });
    await migrated;
    const pools: MutatedPool[] = [];
    const tests = await recordSuite(
      expect as TestRunner['expect'],
      (runner) =>
        runStoreConformance(runner, {
          name: mutant?.bug ?? 'correct',
          createStore: async () => {
            const table = `records_${++tables}`;
            await migrate(admin, { schema, tables: { oncely_idempotency: table } });
            const pool = createPool({ max: 10 });
            const db = mutatedPool(pool, mutant?.sql ?? []);
            pools.push(db);
            const store = postgresStore({ db, schema, table, preparedStatements: false });
            return Object.assign(mutant?.wrap ? mutant.wrap({ store, db }) : store, { end: () => pool.end(), pool: db });
          },
          closeStore: (store) => (store as unknown as { end(): Promise<void> }).end(),
          inspect: (store, scope) => rawRecord(admin, store.table, scope),
          // The caller's transaction on the store's own (mutated) pool, so the join's statements meet the bug.
          openTransaction: (store, body) => inClientTransaction((store as unknown as { pool: MutatedPool }).pool as never, body),
          // Long enough that a loaded CI machine does not lapse a lease the test means to hold.
          shortLeaseMs: 300,
          raceSize: over.raceSize ?? 20,
          numRuns: 10,
          ...(over.raceRounds && { raceRounds: over.raceRounds }),
        }),
      over.clauses ? { filter: (test) => test.clauses.some((clause) => over.clauses!.includes(clause)) } : {},
    );
    return { tests, applied: pools.reduce((sum, pool) => sum + pool.applied(), 0) };
  };
}
