import { OncelyError } from '@oncely/core';
import { preparedOn } from './prepared-on.js';
import type {
  PostgresJsConnectionLike,
  PostgresJsLike,
  PostgresJsReservedLike,
  PostgresJsResultLike,
  PostgresJsSqlLike,
  PostgresTx,
  SqlResult,
} from './postgres-db.js';
import type { ConnectionWatch, MessageOutcome, PostgresJsSession, SqlConnection, SqlDriver, TransactionEnd } from './sql-connection.js';
import { isConnectionLost, sqlState } from './sql-state.js';

/** What postgres.js's `reserve()` and pool methods the handler's `tx` must not reach: the connection is oncely's while it holds it. */
const REFUSED = new Set<PropertyKey>(['release', 'begin', 'reserve', 'end', 'close', 'listen', 'subscribe']);

/** A simple message's results: postgres.js resolves one `Result` for one result set, an array of them for several. */
const resultsOf = (value: PostgresJsResultLike | PostgresJsResultLike[]): PostgresJsResultLike[] =>
  'count' in value ? [value as PostgresJsResultLike] : (value as PostgresJsResultLike[]);

const toSqlResult = <R>(value: PostgresJsResultLike | PostgresJsResultLike[]): SqlResult<R> => {
  // One result set (every statement oncely binds) is read as it is, without a list around it.
  const result = 'count' in value ? (value as PostgresJsResultLike) : ((value as PostgresJsResultLike[]).at(-1) ?? Object.assign([], { count: 0 }));
  return { rows: result as unknown as R[], rowCount: result.count ?? result.length };
};

const settle = (message: Promise<PostgresJsResultLike | PostgresJsResultLike[]>): Promise<MessageOutcome> =>
  message.then(
    (value) => ({ results: resultsOf(value) }),
    (error: unknown) => ({ results: [], error }),
  );

/** A postgres.js connection that closed while oncely held it; the same code postgres.js gives its own. */
function closedError(cause: unknown): Error {
  return Object.assign(new Error('oncely/postgres: the postgres.js connection closed while a transaction held it', { cause }), {
    code: 'CONNECTION_CLOSED',
  });
}

/** How long a failed transaction waits for postgres.js to notice its connection closed. */
const CLOSE_WAIT_MS = 2_000;

/** Resolves when `promise` does or after `ms`, whichever is first; the timer never holds the process open. */
function settled(promise: Promise<void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref?.();
    void promise.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** How long a reserve() may take before it is asked for again (see {@link reserveConnection}). */
const RESERVE_RETRY_MS = 1_000;

/**
 * `sql.reserve()`, asked again when it has not resolved after {@link RESERVE_RETRY_MS}: postgres.js
 * 3.4 loses a reservation that must open a connection without fetching types (`fetch_types: false`),
 * or that was waiting when a connection closed (it hands the request to that connection's reconnect,
 * which drops it), and it then never resolves. A late reservation is released at once.
 */
async function reserveConnection(sql: PostgresJsLike): Promise<PostgresJsReservedLike> {
  for (;;) {
    const asked = sql.reserve();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, RESERVE_RETRY_MS, undefined);
    });
    const reservation = await Promise.race([asked, late]).finally(() => clearTimeout(timer));
    if (reservation) return reservation;
    asked.then(
      (unused) => unused.release(),
      () => undefined,
    );
  }
}

/**
 * Reserves a connection of `sql` for `use`. postgres.js never says when a reserved connection
 * closes, and a query sent on a closed one crashes the process (it writes to a null socket), so
 * oncely hooks the connection's `onclose` through `onexecute` (as postgres.js's own `begin` does)
 * and refuses every later statement. A closed connection is not released: postgres.js already put
 * it back to reconnect, and releasing it would queue work on a dead socket.
 */
async function reserved<T>(sql: PostgresJsLike, prepare: boolean, use: (session: PostgresJsSession) => Promise<T>): Promise<T> {
  if (sql.options?.fetch_types === false) {
    // postgres.js 3.4 never resolves a reserve() that has to open a connection without fetching types.
    throw new OncelyError('invalid_option', 'oncely/postgres: transactions on postgres.js need fetch_types: true (postgres.js cannot reserve a connection without it)');
  }
  const connectionOf: { current?: PostgresJsConnectionLike } = {};
  const watch: ConnectionWatch = {};
  const reservation = await reserveConnection(sql);
  let open = true;
  let closed: () => void = () => undefined;
  const closing = new Promise<void>((resolve) => {
    closed = resolve;
  });
  const onclose = (error: unknown) => {
    watch.lost ??= closedError(error);
    if (connectionOf.current) preparedOn(connectionOf.current).clear();
    closed();
  };
  const onexecute = (connection: PostgresJsConnectionLike) => {
    if (connectionOf.current === undefined) {
      connectionOf.current = connection;
      connection.onclose = onclose;
    }
    return true;
  };
  const live = () => {
    if (watch.lost !== undefined) throw watch.lost;
  };
  // postgres.js leaves a statement sent on a dying connection unsettled when the socket closes
  // without an error event: oncely's own statements also settle when the connection's close is heard.
  const untilClosed = <R>(sent: Promise<R>): Promise<R> =>
    Promise.race([
      sent,
      closing.then(() => {
        throw watch.lost;
      }),
    ]);
  const send = (text: string) => {
    live();
    return untilClosed(reservation.unsafe(text, [], connectionOf.current ? {} : { onexecute }));
  };
  const check = () => {
    if (!open) throw new OncelyError('invalid_state', 'oncely/postgres: this transaction has ended; use tx only while the handler runs');
    live();
  };
  const query = async <R>(text: string, params?: readonly unknown[]) => {
    check();
    return toSqlResult<R>(await untilClosed(reservation.unsafe(text, params ? [...params] : [], { prepare })));
  };
  const exec = async (script: string) => {
    check();
    await untilClosed(reservation.unsafe(script));
  };
  const tx = new Proxy(reservation, {
    apply(target, self, args) {
      check();
      return Reflect.apply(target, self, args);
    },
    get(target, property, receiver) {
      if (property === 'query') return query;
      if (property === 'exec') return exec;
      if (REFUSED.has(property)) {
        return () => {
          throw new OncelyError('invalid_state', `oncely/postgres: tx.${String(property)} is not available; tx runs statements on oncely's transaction`);
        };
      }
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || (property !== 'unsafe' && property !== 'file' && property !== 'notify')) return value;
      return (...args: unknown[]) => {
        check();
        return Reflect.apply(value, target, args);
      };
    },
  }) as unknown as SqlConnection & PostgresJsSqlLike;

  // What a message PREPAREd before its connection was known (it followed the read, unpipelined): tracked on it at the end.
  let unplaced: Set<string> | undefined;
  const session: PostgresJsSession = {
    async pipeline(first, params, next) {
      let second: Promise<MessageOutcome> | undefined;
      live();
      const firstMessage = settle(
        // With parameters, prepared (postgres.js plans it once per connection); without, one simple-protocol message.
        untilClosed(reservation.unsafe(first, [...params], {
          prepare: prepare && params.length > 0,
          onexecute: (connection) => {
            onexecute(connection);
            // Issued before postgres.js flushes `first` (on setImmediate), so both leave in one write; a
            // microtask later, so nothing here throws inside postgres.js.
            second = Promise.resolve()
              .then(() => settle(send(next(preparedOn(connection)))))
              .catch((error: unknown) => ({ results: [], error }));
            return true;
          },
        })),
      );
      const one = await firstMessage;
      // postgres.js skips onexecute when the socket is backed up: then the second goes on its own.
      second ??= Promise.resolve()
        .then(() => settle(send(next(connectionOf.current ? preparedOn(connectionOf.current) : (unplaced = new Set())))))
        .catch((error: unknown) => ({ results: [], error }));
      return [one, await second] as const;
    },
    script: (text) => {
      try {
        return settle(send(text));
      } catch (error) {
        return Promise.resolve({ results: [], error });
      }
    },
    prepares: prepare,
    get prepared() {
      return connectionOf.current ? preparedOn(connectionOf.current) : new Set<string>();
    },
    tx,
    closeTx: () => {
      open = false;
    },
    watch,
  };
  try {
    return await use(session);
  } finally {
    open = false;
    if (unplaced && connectionOf.current && watch.lost === undefined) for (const name of unplaced) preparedOn(connectionOf.current).add(name);
    // A statement can fail on a dying socket before postgres.js has seen it close: a reserve() made
    // in between (the caller's retry) is lost by postgres.js and never resolves, so wait for the close.
    if (watch.lost !== undefined && connectionOf.current?.onclose === onclose) await settled(closing, CLOSE_WAIT_MS);
    if (connectionOf.current?.onclose === onclose) connectionOf.current.onclose = null;
    if (watch.lost === undefined) reservation.release();
  }
}

/**
 * BEGIN, work, COMMIT or ROLLBACK on a reserved connection: postgres.js's `begin` cannot be told
 * apart from a lost connection once its callback returned, and this one shares `reserved`'s guard.
 */
function transaction<T>(sql: PostgresJsLike, prepare: boolean, work: (tx: SqlConnection) => Promise<TransactionEnd<T>>): Promise<T> {
  return reserved(sql, prepare, async (session) => {
    const begun = await session.script('BEGIN');
    if (begun.error !== undefined) throw begun.error;
    let end: TransactionEnd<T>;
    try {
      end = await work(session.tx);
      if (session.watch.lost !== undefined) throw session.watch.lost;
    } catch (error) {
      session.closeTx();
      if (isConnectionLost(error)) watchLost(session.watch, error);
      const rolledBack = await session.script('ROLLBACK');
      // A connection that cannot roll back is gone: the server rolls back; the work's own error is the answer.
      if (rolledBack.error !== undefined && !isConnectionLost(rolledBack.error)) throw rolledBack.error;
      throw session.watch.lost ?? error;
    }
    session.closeTx();
    const finished = await session.script(end.action === 'commit' ? 'COMMIT' : 'ROLLBACK');
    if (finished.error !== undefined) {
      if (end.action === 'rollback' && isConnectionLost(finished.error)) return end.value;
      // A COMMIT refused with a SQLSTATE ended the transaction; anything else leaves it unknown.
      if (sqlState(finished.error) === undefined) watchLost(session.watch, finished.error);
      throw finished.error;
    }
    if (end.action === 'commit' && finished.results.at(-1)?.command === 'ROLLBACK') {
      throw new Error('COMMIT rolled back: the transaction had already failed');
    }
    return end.value;
  });
}

/** Marks a connection whose state is unknown as lost, so it is not released to serve someone else. */
function watchLost(watch: ConnectionWatch, error: unknown): void {
  watch.lost ??= error;
}

/** Options of the postgres.js driver. */
export interface PostgresJsDriverOptions {
  /** Prepare oncely's statements (default: what the instance's own `prepare` option says). */
  readonly prepare: boolean;
}

/**
 * postgres.js behind oncely's driver interface. Statements go through `sql.unsafe` with bound
 * parameters, prepared unless `prepare: false` (the instance's option, or `preparedStatements`);
 * a transaction reserves a connection and sends BEGIN and COMMIT itself, so the claim can travel
 * with BEGIN (`reserve`).
 */
export function postgresJsDriver(sql: PostgresJsLike, options: PostgresJsDriverOptions): SqlDriver {
  const prepare = options.prepare;
  const queryOptions = { prepare };
  return {
    kind: 'pool',
    // `then` on postgres.js's query, not `await` in an async function: a replay is one statement, and each hop is a microtask.
    query: <R>(text: string, params?: readonly unknown[]) =>
      sql.unsafe(text, params ? [...params] : [], queryOptions).then((value) => toSqlResult<R>(value)),
    transaction: (work) => transaction(sql, prepare, work),
    reserve: (use) => reserved(sql, prepare, use),
  };
}

const isFunction = (value: unknown) => typeof value === 'function';

/** A postgres.js instance: a function with `begin`, `unsafe` and `reserve` (a `pg` pool or client is an object). */
export const isPostgresJs = (db: unknown): db is PostgresJsLike =>
  isFunction(db) && isFunction((db as PostgresJsLike).begin) && isFunction((db as PostgresJsLike).unsafe) && isFunction((db as PostgresJsLike).reserve);

/** A postgres.js `sql` the caller holds (its own `sql.begin` transaction, or oncely's tx): a function with `unsafe`. */
export const isPostgresJsSql = (tx: unknown): tx is PostgresJsSqlLike => isFunction(tx) && isFunction((tx as PostgresJsSqlLike).unsafe);

/**
 * The transaction handle a caller passes (to `outbox.enqueue`, `inbox.process`) as oncely writes
 * through it: anything with `query` as it is (`pg`, PGlite, oncely's own tx), a postgres.js `sql`
 * (say its own `sql.begin` transaction) through `unsafe`; undefined for anything else.
 */
export function writableTx(tx: unknown): PostgresTx | undefined {
  if (typeof (tx as PostgresTx | null | undefined)?.query === 'function') return tx as PostgresTx;
  return isPostgresJsSql(tx) ? postgresJsTx(tx) : undefined;
}

/** A postgres.js `sql` the caller passes as a transaction handle, seen as oncely's `query(text, params)`. */
function postgresJsTx(tx: PostgresJsSqlLike): SqlConnection {
  return {
    query: async <R>(text: string, params?: readonly unknown[]) => toSqlResult<R>(await tx.unsafe(text, params ? [...params] : [], { prepare: true })),
    exec: async (script) => {
      await tx.unsafe(script);
    },
  };
}
