import type { PgClientLike, PgPoolLike, PostgresJsLike, PostgresJsSqlLike, PostgresTx, SqlResult } from '../driver/postgres-db.js';

/**
 * How oncely runs its statements through an ORM's database object and its transactions, so a
 * handler, an outbox enqueue and an inbox record write through the ORM's own transaction object.
 * `@oncely/postgres/drizzle`, `/kysely` and `/knex` export one each; any ORM that can run a
 * parameterised statement inside its transaction can have one.
 */
export interface TransactionBridge<Db, Tx> {
  /** Names the ORM in errors: `'drizzle'`, `'kysely'`, `'knex'`, … */
  readonly name: string;
  /** The ORM's own transaction on `db`: commits when `work` resolves, rolls back when it throws (rethrowing that error). */
  transaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T>;
  /** One of oncely's statements (`$1`…`$n` parameters) through `db` or `tx`: its rows, and the rows it affected or returned. */
  query<R extends object>(on: Db | Tx, text: string, params: readonly unknown[]): Promise<SqlResult<R>>;
  /**
   * Optional: true when `db` runs in process (PGlite), where a call costs no network round trip. A
   * completed record is then read before any transaction opens, as on oncely's own PGlite driver:
   * a replay is one call with no transaction, a first request one call more.
   */
  readsFirst?(db: Db): boolean;
  /**
   * Optional, for an ORM on `pg`: the `pg.Pool` under `db` (undefined when `db` is on another driver),
   * and the ORM's transaction object over one of its connections inside a transaction oncely opened.
   * With it the store sends the claim with `BEGIN` and the save with `COMMIT`, one message each, as on
   * raw `pg`: a first request adds no round trip to the ORM's transaction.
   */
  readonly pg?: {
    pool(db: Db): PgPoolLike | undefined;
    transactionOn(db: Db, client: PgClientLike): Promise<Tx>;
    /** The isolation level the ORM sets on its transactions on `db`, if any (one of PostgreSQL's four, any case): oncely's claim opens the transaction at it. */
    isolationLevel?(db: Db): string | undefined;
    /**
     * Called once the handler is done with `tx`, before the save and COMMIT go out: the ORM's object
     * stops using the connection. `committing` when the transaction is to commit: what the ORM writes
     * at its own commit (a unit of work's flush) is written now; a failure there rolls everything back.
     */
    ended?(tx: Tx, committing: boolean): Promise<void> | void;
  };
  /**
   * Optional, for an ORM on postgres.js: the `postgres()` instance under `db` (undefined when `db` is
   * on another driver), and the ORM's transaction object over the `sql` of a connection the store
   * reserved, inside a transaction oncely opened: the read and claim + `BEGIN` leave in one write and
   * the save travels with `COMMIT`, as on postgres.js without an ORM. `ended` as for `pg`.
   */
  readonly postgresJs?: {
    sql(db: Db): PostgresJsLike | undefined;
    transactionOn(db: Db, sql: PostgresJsSqlLike & PostgresTx): Promise<Tx>;
    ended?(tx: Tx, committing: boolean): Promise<void> | void;
  };
}

const DECLINED = Symbol.for('oncely.postgres.heldRouteDeclined');

/**
 * What a bridge's `pg.pool(db).connect()` rejects with when the connection it got shows the ORM is
 * not on the driver the held route needs (seen only once a connection is in hand): nothing was sent,
 * and the store keeps the ORM's own transaction from then on.
 */
export class HeldRouteDeclined extends Error {
  /** A brand, not `instanceof`: the bridge's subpath and the store may load separate copies of this module (CommonJS builds). */
  readonly [DECLINED] = true;
}

/** Whether `error` is a {@link HeldRouteDeclined}, whichever copy of this module made it. */
export const isHeldRouteDeclined = (error: unknown): boolean => (error as { [DECLINED]?: unknown } | null)?.[DECLINED] === true;

/** The database type a bridge takes. */
export type BridgeDb<B> = B extends TransactionBridge<infer Db, infer _Tx> ? Db : never;

/** The transaction type a bridge hands out. */
export type BridgeTx<B> = B extends TransactionBridge<infer _Db, infer Tx> ? Tx : never;
