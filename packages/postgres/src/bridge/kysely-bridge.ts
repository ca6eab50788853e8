import { OncelyError } from '@oncely/core';
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { sqlResult } from './sql-result.js';
import type { TransactionBridge } from './transaction-bridge.js';
import { endHeldKyselyTransaction, heldKyselyTransaction, kyselyPgPool } from './kysely-held-transaction.js';

/**
 * The Kysely bridge (PostgresDialect, or any dialect on a PostgreSQL driver): oncely's statements
 * run as `CompiledQuery.raw(text, params)` through `db.executeQuery` / `trx.executeQuery`, with
 * PostgreSQL's own `$n` parameters as they are; its transactions are `db.transaction().execute(…)`,
 * and handlers get Kysely's `trx`, typed with your database interface:
 *
 * ```ts
 * const store = postgresStore({ db, bridge: kyselyBridge<Database>() });
 * await idempotency.runInTransaction(request, async ({ tx }) => { await tx.insertInto('payments').values(row).execute(); … });
 * ```
 */
export function kyselyBridge<DB>(): TransactionBridge<Kysely<DB>, Transaction<DB>> {
  return {
    name: 'kysely',
    transaction: (db, work) => {
      if (typeof db?.transaction !== 'function') throw new OncelyError('invalid_option', 'oncely/postgres: kyselyBridge needs a Kysely instance as db');
      return db.transaction().execute(work);
    },
    async query(on, text, params) {
      const result = await on.executeQuery(CompiledQuery.raw(text, [...params]));
      const { rows, numAffectedRows } = result as { rows: unknown[]; numAffectedRows?: bigint };
      // Kysely reports a count for INSERT, UPDATE, DELETE and MERGE only; for the rest, the rows returned.
      return sqlResult({ rows, rowCount: numAffectedRows === undefined ? rows.length : Number(numAffectedRows) });
    },
    // On Kysely's PostgresDialect (pg) oncely opens the transaction on a connection of Kysely's pool:
    // the claim travels with BEGIN, the save with COMMIT, and the handler gets Kysely's own trx over
    // that connection, whose begin and final commit are answered locally (kysely-held-transaction.ts).
    pg: {
      pool: kyselyPgPool,
      transactionOn: heldKyselyTransaction,
      ended: endHeldKyselyTransaction,
    },
  };
}
