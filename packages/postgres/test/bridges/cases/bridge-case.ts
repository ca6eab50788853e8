import type { TransactionBridge } from '@oncely/postgres';

/** A business row the suite writes through the ORM: one per executed request. */
export interface PaymentRow {
  readonly key: string;
  readonly amount: number;
}

/** An ORM's database object, opened on the shared server. */
export interface OpenedDb<Db> {
  readonly db: Db;
  close(): Promise<void>;
}

/**
 * One ORM (on one driver) as the bridge suite drives it: how to open its database, the bridge, and
 * the few things the suite does with the ORM's own API. Imported by the suite and by the child
 * process of the kill test (`fixtures/bridge-child.ts`), so both write through the same code.
 */
export interface BridgeCase<Db, Tx> {
  /** Names the suite: `drizzle (node-postgres)`. */
  readonly name: string;
  readonly bridge: TransactionBridge<Db, Tx>;
  /** A database object on `url`, at most `max` connections, for the suite's `schema` (Prisma binds a client to one). */
  open(url: string, max: number, schema: string): Promise<OpenedDb<Db>>;
  /** Inserts `row` into `"<schema>".bridge_payments` with the ORM inside `tx`; resolves with its id. */
  insert(tx: Tx, schema: string, row: PaymentRow): Promise<string>;
  /**
   * What the ORM does with a transaction opened inside `tx`: `savepoint` (it nests under a savepoint,
   * Drizzle and Knex) or `refused` (it throws, Kysely's `trx.transaction()`).
   */
  readonly nesting: 'savepoint' | 'refused';
  /** Runs `work` in the ORM's own nested transaction inside `tx`; rejects as `work` does (or as the ORM refuses). */
  nested(tx: Tx, work: (inner: Tx) => Promise<void>): Promise<void>;
  /** The id of the connection `tx` runs on (`SELECT pg_backend_pid()` through the ORM). */
  backendPid(tx: Tx): Promise<number>;
}

/** The business table every bridge writes: no unique key, so only oncely stands between a retry and a second row. */
export const paymentsTable = (schema: string) =>
  `CREATE TABLE IF NOT EXISTS "${schema}".bridge_payments (id bigserial PRIMARY KEY, idem_key text NOT NULL, amount integer NOT NULL)`;
