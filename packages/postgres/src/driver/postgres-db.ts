/** One statement's rows, the same shape whichever driver ran it. */
export interface SqlResult<R> {
  readonly rows: R[];
  /** Rows inserted, updated or deleted; rows returned for a SELECT. */
  readonly rowCount: number;
}

/**
 * Runs one SQL statement with bound parameters (`$1`, `$2`, ...). This is the transaction handle a
 * `runInTransaction` handler receives as `tx`, and what the outbox, inbox and journal write through,
 * so business SQL and oncely's rows commit together.
 */
export interface PostgresTx {
  query<R extends object = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<SqlResult<R>>;
}

/** What a `pg` query resolves to (only the fields oncely reads). */
export interface PgQueryResultLike {
  readonly rows: unknown[];
  readonly rowCount?: number | null;
  readonly command?: string;
}

/** A named statement, as `pg` takes it: prepared once per connection. */
export interface PgQueryConfigLike {
  readonly name: string;
  readonly text: string;
  readonly values?: unknown[];
}

/** A connection that runs SQL: `pg.Client`, or a client checked out of a pool. */
export interface PgClientLike {
  query(textOrConfig: string | PgQueryConfigLike, values?: unknown[]): Promise<PgQueryResultLike>;
}

/** A client checked out of a `pg.Pool`. */
export interface PgPoolClientLike extends PgClientLike {
  release(error?: Error | boolean): void;
  /** pg emits `error` on a checked-out client whose backend dies; unheard, it would crash the process. */
  on?(event: 'error', listener: (error: Error) => void): unknown;
  removeListener?(event: 'error', listener: (error: Error) => void): unknown;
}

/** A `pg.Pool`: each transaction runs on its own checked-out connection. */
export interface PgPoolLike extends PgClientLike {
  /** pg-pool calls a callback at once on checkout (a promise resolves a tick later); either form is used. */
  connect(callback?: (error: Error | undefined, client: PgPoolClientLike | undefined) => void): Promise<PgPoolClientLike> | undefined;
  readonly totalCount: number;
}

/** What PGlite's `query` resolves to (only the fields oncely reads). */
export interface PGliteResultLike {
  readonly rows: unknown[];
  readonly affectedRows?: number;
  readonly rowCount?: number;
}

/** PGlite's transaction handle. */
export interface PGliteTransactionLike {
  query(text: string, params?: unknown[]): Promise<PGliteResultLike>;
  exec(text: string): Promise<unknown>;
  rollback(): Promise<void>;
  readonly closed: boolean;
}

/** A PGlite instance (`@electric-sql/pglite`): one embedded connection. */
export interface PGliteLike {
  query(text: string, params?: unknown[]): Promise<PGliteResultLike>;
  exec(text: string): Promise<unknown>;
  transaction<T>(callback: (tx: PGliteTransactionLike) => Promise<T>): Promise<T>;
}

/**
 * The database oncely is given: a `pg.Pool` (recommended for servers), a connected `pg.Client`
 * (statements and transactions are serialized on its one connection) or a PGlite instance. Told
 * apart by shape, so neither driver is imported.
 */
export type PostgresDb = PgPoolLike | PgClientLike | PGliteLike;
