import { OncelyError } from '@oncely/core';
import type { TransactionBridge } from '../bridge/transaction-bridge.js';
import type { PgClientLike, PGliteTransactionLike, PostgresTx, SqlResult } from './postgres-db.js';
import type { SqlDriver, TransactionEnd } from './sql-driver.js';

/**
 * oncely's statements on a database and inside its transactions, whoever holds the connection:
 * oncely's own driver (`Tx` is a {@link PostgresTx}) or an ORM through a {@link TransactionBridge}
 * (`Tx` is the ORM's transaction object, handed to handlers as it is).
 */
export interface TxDriver<Tx> {
  /** One statement outside any transaction. */
  query<R extends object>(text: string, params?: readonly unknown[]): Promise<SqlResult<R>>;
  /** Runs `work` in a transaction of its own: commits or rolls back as it decides, rolls back when it throws. */
  transaction<T>(work: (tx: Tx) => Promise<TransactionEnd<T>>): Promise<T>;
  /** oncely's statements inside `tx`. */
  on(tx: Tx): PostgresTx;
  /** A transaction handle the caller may pass where a `Tx` is expected (checked before any SQL runs). */
  isTx(tx: unknown): tx is Tx;
}

const hasQuery = (tx: unknown): tx is PostgresTx =>
  (typeof tx === 'object' || typeof tx === 'function') && tx !== null && typeof (tx as PostgresTx).query === 'function';

/** oncely's own driver: its transaction handle already is a `PostgresTx`. */
export function ownTxDriver(driver: SqlDriver): TxDriver<PostgresTx> {
  return {
    query: (text, params) => driver.query(text, params),
    transaction: (work) => driver.transaction(work),
    on: (tx) => tx,
    isTx: hasQuery,
  };
}

/** The value of a rollback decision, thrown out of the ORM's callback so the ORM rolls back (an Error, as some ORMs insist). */
class RollbackDecided<T> extends Error {
  constructor(readonly value: T) {
    super('oncely/postgres: the transaction rolls back as decided');
  }
}

/** An ORM's database and transactions through its bridge. */
export function bridgeTxDriver<Db, Tx>(db: Db, bridge: TransactionBridge<Db, Tx>): TxDriver<Tx> {
  return {
    query: (text, params) => bridge.query(db, text, params ?? []),
    async transaction<T>(work: (tx: Tx) => Promise<TransactionEnd<T>>): Promise<T> {
      let decided: RollbackDecided<T> | undefined;
      try {
        return await bridge.transaction(db, async (tx) => {
          const end = await work(tx);
          if (end.action === 'commit') return end.value;
          decided = new RollbackDecided(end.value);
          throw decided;
        });
      } catch (error) {
        // Some ORMs wrap what the callback threw; the decision is recognised either way.
        if (decided !== undefined && (error === decided || (error as { cause?: unknown } | null)?.cause === decided)) return decided.value;
        throw error;
      }
    },
    on: (tx) => ({ query: (text, params) => bridge.query(tx, text, params ?? []) }),
    isTx: (tx): tx is Tx => (typeof tx === 'object' || typeof tx === 'function') && tx !== null,
  };
}

/** What `runInTransaction(…, { tx })` accepts on the raw path: a `pg` client inside the caller's BEGIN, PGlite's transaction, or any `PostgresTx`. */
export type PostgresJoinable = PostgresTx | PgClientLike | PGliteTransactionLike;

/** A caller's open `pg` or PGlite transaction as a `PostgresTx` (rowCount normalised as the drivers report it). */
export function joinedTx(tx: PostgresJoinable): PostgresTx {
  if (!hasQuery(tx)) throw new OncelyError('invalid_option', 'oncely/postgres: the transaction to join must be a pg client, a PGlite transaction or a PostgresTx');
  const client = tx as unknown as { query(text: string, params?: unknown[]): Promise<{ rows: unknown[]; rowCount?: number | null; affectedRows?: number }> };
  return {
    async query<R extends object>(text: string, params?: readonly unknown[]): Promise<SqlResult<R>> {
      const result = await client.query(text, params && [...params]);
      return { rows: result.rows as R[], rowCount: result.rowCount ?? result.affectedRows ?? result.rows.length };
    },
  };
}
