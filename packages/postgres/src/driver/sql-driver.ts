import { OncelyError } from '@oncely/core';
import { preparedName } from '../sql/prepared.js';
import { checkout } from './checkout.js';
import { isConnectionLost, sqlState } from './sql-state.js';
import { type Mutex, mutex } from './mutex.js';
import { PgScript } from './script.js';
import { isPostgresJs, postgresJsDriver } from './postgresjs-driver.js';
import type { ConnectionWatch, PgSession, SqlConnection, SqlDriver, TransactionEnd } from './sql-connection.js';
import { preparedOn } from './prepared-on.js';
import { pgliteStatements } from './pglite-statements.js';
import type {
  PgPoolClientLike,
  PGliteLike,
  PGliteResultLike,
  PgClientLike,
  PgPoolLike,
  PgQueryResultLike,
  PostgresDb,
  SqlResult,
} from './postgres-db.js';

export type { ConnectionWatch, PgSession, PostgresJsSession, SqlConnection, SqlDriver, TransactionEnd } from './sql-connection.js';


/** How oncely talks to a database. */
export interface SqlDriverOptions {
  /**
   * Run oncely's own statements as named prepared statements on `pg` (default true): planned once per
   * connection. Turn off behind a pooler that cannot keep them (PgBouncer in transaction mode before
   * 1.21). postgres.js created with `prepare: false` is read as off. PGlite has no named statements;
   * the option does not apply to it.
   */
  readonly preparedStatements?: boolean;
}

/** Sends a statement through `pg`, named when it is one of oncely's and naming is on. */
function pgQuery(client: PgClientLike, prepare: boolean, text: string, params?: readonly unknown[]) {
  const values = params && [...params];
  const name = prepare ? preparedName(text) : undefined;
  return name ? client.query({ name, text, values: values ?? [] }) : client.query(text, values);
}

const fromPg = <R>(result: PgQueryResultLike): SqlResult<R> => ({
  rows: result.rows as R[],
  rowCount: result.rowCount ?? result.rows.length,
});

const fromPglite = <R>(result: PGliteResultLike): SqlResult<R> => ({
  rows: result.rows as R[],
  rowCount: result.rowCount ?? result.affectedRows ?? result.rows.length,
});

/**
 * Wraps a connection so it refuses SQL after `close` (a pooled connection may serve someone else by
 * then); `onFailure` sees every statement's error.
 */
function guard(connection: SqlConnection, onFailure: (error: unknown) => void = () => undefined) {
  let open = true;
  const check = () => {
    if (!open) {
      throw new OncelyError('invalid_state', 'oncely/postgres: this transaction has ended; use tx only while the handler runs');
    }
  };
  const guarded: SqlConnection = {
    async query<R extends object>(text: string, params?: readonly unknown[]) {
      check();
      return connection.query<R>(text, params).catch((error: unknown) => {
        onFailure(error);
        throw error;
      });
    },
    async exec(script) {
      check();
      return connection.exec(script).catch((error: unknown) => {
        onFailure(error);
        throw error;
      });
    },
  };
  return {
    connection: guarded,
    close: () => {
      open = false;
    },
  };
}

/** One closed handle serves every claim answered without a transaction: it holds nothing and never opens again. */
const ENDED = guard({
  query: () => Promise.reject(new Error('unreachable')),
  exec: () => Promise.reject(new Error('unreachable')),
});
ENDED.close();

/** A handle for a claim answered without a transaction: it refuses SQL, as any tx does once its transaction ended. */
export function endedConnection(): SqlConnection {
  return ENDED.connection;
}

const pgConnection = (client: PgClientLike, prepare: boolean): SqlConnection => ({
  query: async <R>(text: string, params?: readonly unknown[]) => fromPg<R>(await pgQuery(client, prepare, text, params)),
  exec: async (script) => {
    await client.query(script);
  },
});


/**
 * BEGIN, work, COMMIT or ROLLBACK on one `pg` connection. Calls `broken` when the connection's
 * state is unknown (a failed COMMIT or ROLLBACK), so a pool destroys it instead of reusing it.
 * Once the connection is lost (`watch`), nothing can commit: the transaction fails with that loss,
 * whatever the work answered or threw, so callers tell it from the work's own errors.
 */
async function pgTransaction<T>(
  client: PgClientLike,
  prepare: boolean,
  work: (tx: SqlConnection) => Promise<TransactionEnd<T>>,
  broken: (error: unknown) => void,
  watch: ConnectionWatch = {},
): Promise<T> {
  const handle = guard(pgConnection(client, prepare), (error) => {
    if (isConnectionLost(error)) watch.lost ??= error;
  });
  let stage: 'begin' | 'open' | 'ending' | 'ended' = 'begin';
  try {
    await client.query('BEGIN');
    stage = 'open';
    const end = await work(handle.connection);
    if (watch.lost !== undefined) throw watch.lost;
    handle.close();
    stage = 'ending';
    const finished = await client.query(end.action === 'commit' ? 'COMMIT' : 'ROLLBACK').catch((error: unknown) => {
      // A lost connection's transaction is rolled back by the server: a ROLLBACK that cannot be sent changes nothing.
      if (end.action === 'rollback' && isConnectionLost(error)) {
        broken(error);
        return { rows: [], command: 'ROLLBACK' };
      }
      throw error;
    });
    stage = 'ended';
    if (end.action === 'commit' && finished.command === 'ROLLBACK') {
      // pg reports COMMIT of an aborted transaction as a successful ROLLBACK: nothing was saved.
      throw new Error('COMMIT rolled back: the transaction had already failed');
    }
    return end.value;
  } catch (error) {
    handle.close();
    if (stage === 'open') {
      await client.query('ROLLBACK').catch(broken);
    } else if (stage !== 'ended' && sqlState(error) === undefined) {
      // BEGIN, COMMIT or ROLLBACK did not reach a verdict: the connection's state is unknown.
      broken(error);
    }
    throw stage === 'open' && watch.lost !== undefined ? watch.lost : error;
  }
}

function pgSession(client: PgClientLike, prepare: boolean, broken: (error: unknown) => void, watch: ConnectionWatch): PgSession {
  const prepared = preparedOn(client);
  const handle = guard(pgConnection(client, prepare), (error) => {
    if (isConnectionLost(error)) watch.lost ??= error;
  });
  return {
    prepared,
    async script(text) {
      const script = new PgScript(text);
      // pg runs any object with `submit` as a query of its own making.
      (client as unknown as { query(submittable: PgScript): unknown }).query(script);
      return script.outcome.catch((error: unknown) => {
        if (isConnectionLost(error)) watch.lost ??= error;
        throw error;
      });
    },
    tx: handle.connection,
    closeTx: handle.close,
    watch,
    broken,
    client,
  };
}

/**
 * Checks a connection out of `pool` for `use`, listening for its backend's death while it is held,
 * and releases it afterwards: destroyed when `use` reported it broken or it was lost.
 */
async function withPoolClient<T>(
  pool: PgPoolLike,
  use: (client: PgPoolClientLike, broken: (error: unknown) => void, watch: ConnectionWatch) => Promise<T>,
): Promise<T> {
  let failure: Error | undefined;
  const watch: ConnectionWatch = {};
  const broken = (error: unknown) => {
    failure ??= error instanceof Error ? error : new Error(String(error));
  };
  // A backend that dies while the handler runs (restart, pg_terminate_backend) must fail this
  // transaction, not the process: pg-pool listens for errors only on idle clients.
  const lost = (error: Error) => {
    watch.lost ??= error;
    broken(error);
  };
  const client = await checkout(pool, lost);
  try {
    return await use(client, broken, watch);
  } finally {
    client.removeListener?.('error', lost);
    client.release(failure);
  }
}

function poolDriver(pool: PgPoolLike, prepare: boolean): SqlDriver {
  return {
    kind: 'pool',
    query: async <R>(text: string, params?: readonly unknown[]) => fromPg<R>(await pgQuery(pool, prepare, text, params)),
    transaction: (work) => withPoolClient(pool, (client, broken, watch) => pgTransaction(client, prepare, work, broken, watch)),
    session: (use) => withPoolClient(pool, (client, broken, watch) => use(pgSession(client, prepare, broken, watch))),
  };
}

/** One turn order per client: a store, an outbox and a journal sharing it must not interleave. */
const clientTurns = new WeakMap<PgClientLike, Mutex>();

function clientDriver(client: PgClientLike, prepare: boolean): SqlDriver {
  let turn = clientTurns.get(client);
  if (!turn) clientTurns.set(client, (turn = mutex()));
  return {
    kind: 'client',
    query: <R>(text: string, params?: readonly unknown[]) =>
      turn.run(async () => fromPg<R>(await pgQuery(client, prepare, text, params))),
    transaction: (work) => turn.run(() => pgTransaction(client, prepare, work, () => undefined)),
    // The client is the caller's: nothing here may destroy it.
    session: (use) => turn.run(() => use(pgSession(client, prepare, () => undefined, {}))),
  };
}

function pgliteDriver(db: PGliteLike): SqlDriver {
  const statements = pgliteStatements(db);
  return {
    kind: 'pglite',
    query: async <R>(text: string, params?: readonly unknown[]) =>
      fromPglite<R>((await statements.outside(text, params)) ?? (await db.query(text, params && [...params]))),
    prepare: statements.prepare,
    transaction: (work) =>
      db.transaction(async (tx) => {
        const handle = guard({
          query: async <R>(text: string, params?: readonly unknown[]) =>
            fromPglite<R>((await statements.inside(tx, text, params)) ?? (await tx.query(text, params && [...params]))),
          exec: async (script) => {
            await tx.exec(script);
          },
        });
        try {
          const end = await work(handle.connection);
          if (end.action === 'rollback' && !tx.closed) await tx.rollback();
          return end.value;
        } finally {
          handle.close();
        }
      }),
  };
}

const isFunction = (value: unknown) => typeof value === 'function';

/**
 * Puts any supported database behind one interface, told apart by shape: postgres.js is a function
 * with `begin`, `unsafe` and `reserve`; PGlite has `transaction` and `exec`; a `pg.Pool` has `connect` and `totalCount`; anything else with `query` is a single
 * connection (`pg.Client`, or a client checked out of a pool) whose statements are serialized.
 */
export function sqlDriver(db: PostgresDb, options: SqlDriverOptions = {}): SqlDriver {
  const shape = db as Partial<PGliteLike & PgPoolLike> | null | undefined;
  const prepare = options.preparedStatements ?? true;
  // postgres.js first: it is a function, and carries no `connect`, `transaction` or `query`.
  if (isPostgresJs(db)) return postgresJsDriver(db, { prepare: prepare && db.options?.prepare !== false });
  if (isFunction(shape?.transaction) && isFunction(shape?.exec)) return pgliteDriver(db as PGliteLike);
  if (isFunction(shape?.connect) && typeof shape?.totalCount === 'number') return poolDriver(db as PgPoolLike, prepare);
  if (isFunction(shape?.query)) return clientDriver(db as PgClientLike, prepare);
  throw new OncelyError('invalid_option', 'oncely/postgres: db must be a pg.Pool, a connected pg.Client, a postgres.js sql or a PGlite instance');
}
