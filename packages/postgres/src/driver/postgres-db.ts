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

/** What a postgres.js query resolves to (only the fields oncely reads): rows, with the statement's count. */
export interface PostgresJsResultLike extends ReadonlyArray<unknown> {
  readonly count: number | null;
  readonly command?: string;
}

/** What postgres.js's `unsafe` takes besides text and parameters (`onexecute` is how its own `begin` finds its connection). */
export interface PostgresJsQueryOptions {
  readonly prepare?: boolean;
  readonly onexecute?: (connection: PostgresJsConnectionLike) => unknown;
}

/** postgres.js's connection object, as `onexecute` hands it over: oncely only listens for its close. */
export interface PostgresJsConnectionLike {
  onclose?: ((error: unknown) => void) | null;
}

/** The part of a postgres.js `sql` (or a reserved or transaction `sql`) oncely calls. */
export interface PostgresJsSqlLike {
  // biome-ignore lint/suspicious/noExplicitAny: postgres.js's tagged-template signature, whatever the caller's types.
  (...args: any[]): unknown;
  unsafe(text: string, params?: unknown[], options?: PostgresJsQueryOptions): Promise<PostgresJsResultLike | PostgresJsResultLike[]>;
}

/** A reserved postgres.js connection (`await sql.reserve()`). */
export interface PostgresJsReservedLike extends PostgresJsSqlLike {
  release(): void;
}

/**
 * A postgres.js instance (`postgres()` from the `postgres` package): a pool of connections, told
 * apart by being a function with `begin`, `unsafe` and `reserve`.
 */
export interface PostgresJsLike extends PostgresJsSqlLike {
  begin(...args: never[]): Promise<unknown>;
  reserve(): Promise<PostgresJsReservedLike>;
  readonly options: { readonly prepare?: boolean; readonly fetch_types?: boolean };
}

/**
 * The database oncely is given: a `pg.Pool` (recommended for servers), a connected `pg.Client`
 * (statements and transactions are serialized on its one connection), a postgres.js `sql` or a
 * PGlite instance. Told apart by shape, so no driver is imported.
 */
export type PostgresDb = PgPoolLike | PgClientLike | PGliteLike | PostgresJsLike;

/**
 * The handler's `tx` (and the outbox's and inbox's) for a database `Db`: postgres.js's own `sql`
 * on the transaction's connection when `Db` is a postgres.js instance, so tagged-template SQL
 * works; `PostgresTx` for `pg` and PGlite.
 */
export type TxOf<Db> = Db extends PostgresJsLike ? Db & PostgresTx : PostgresTx;
