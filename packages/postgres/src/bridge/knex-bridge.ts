import { OncelyError } from '@oncely/core';
import type { Knex } from 'knex';
import { splitParameters, sqlResult } from './sql-result.js';
import type { TransactionBridge } from './transaction-bridge.js';
import { endHeldKnexTransaction, heldKnexTransaction, knexPgPool } from './knex-held-transaction.js';

/** Knex's positional form of a `$n` statement: each `$n` a `?` binding, in the order they appear. */
export function knexStatement(text: string, params: readonly unknown[]): { readonly sql: string; readonly bindings: unknown[] } {
  const { parts, indexes } = splitParameters(text);
  // A `?` of oncely's own would be read as a binding: its statements have none, this keeps it so.
  if (parts.some((part) => part.includes('?'))) throw new OncelyError('invalid_state', 'oncely/postgres: a statement with ? cannot go through knexBridge');
  return { sql: parts.join('?'), bindings: indexes.map((index) => params[index] ?? null) };
}

/**
 * The Knex bridge (the `pg` client): oncely's statements run as `knex.raw` / `trx.raw` with bound
 * `?` parameters, its transactions are `knex.transaction(…)`, and handlers get Knex's `trx`:
 *
 * ```ts
 * const store = postgresStore({ db: knex, bridge: knexBridge() });
 * await idempotency.runInTransaction(request, async ({ tx }) => { await tx('payments').insert(row); … });
 * ```
 */
export function knexBridge(): TransactionBridge<Knex, Knex.Transaction> {
  return {
    name: 'knex',
    transaction: (db, work) => {
      if (typeof db?.transaction !== 'function') throw new OncelyError('invalid_option', 'oncely/postgres: knexBridge needs a Knex instance as db');
      return db.transaction((trx) => work(trx));
    },
    async query(on, text, params) {
      const { sql, bindings } = knexStatement(text, params);
      return sqlResult(await on.raw(sql, bindings as Knex.RawBinding[]));
    },
    // On Knex's pg client oncely opens the transaction on a connection of Knex's pool: the claim
    // travels with BEGIN, the save with COMMIT, and the handler gets Knex's own trx over that
    // connection, whose BEGIN; and final COMMIT; are answered locally (knex-held-transaction.ts).
    pg: {
      pool: knexPgPool,
      transactionOn: heldKnexTransaction,
      ended: endHeldKnexTransaction,
    },
  };
}
