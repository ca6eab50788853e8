import { kyselyBridge } from '@oncely/postgres/kysely';
import { type Generated, Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { BridgeCase } from './bridge-case.js';

/** The suite's business table, as Kysely sees it. */
export interface Database {
  bridge_payments: { id: Generated<string>; idem_key: string; amount: number };
}

/** Kysely with its PostgresDialect over a `pg.Pool`. */
export const kyselyCase: BridgeCase<Kysely<Database>, Transaction<Database>> = {
  name: 'kysely (PostgresDialect, pg)',
  bridge: kyselyBridge<Database>(),
  async open(url, max) {
    const pool = new pg.Pool({ connectionString: url, max });
    pool.on('error', () => undefined);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    // Kysely's destroy ends the pool it was given.
    return { db, close: () => db.destroy() };
  },
  async insert(tx, schema, row) {
    const inserted = await tx
      .withSchema(schema)
      .insertInto('bridge_payments')
      .values({ idem_key: row.key, amount: row.amount })
      .returning('id')
      .executeTakeFirstOrThrow();
    return String(inserted.id);
  },
  // Kysely has no nested transaction on a Transaction: trx.transaction() throws (savepoints are a ControlledTransaction's).
  nesting: 'refused',
  nested: async (tx) => {
    (tx as unknown as { transaction(): unknown }).transaction();
  },
  async backendPid(tx) {
    const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(tx);
    return rows[0]!.pid;
  },
};

export default kyselyCase;
