import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import postgres from 'postgres';
import { type PgRoundTripProxy, startPgRoundTripProxy } from '../servers/pg-round-trip-proxy.js';
import { pgliteTransaction, pgTransaction, postgresJsTransaction } from './business-transaction.js';
import type { TrafficCounter } from './count-round-trips.js';
import type { DatabaseHandles } from './contenders.js';
import type { Queryable } from './raw-lease.js';
import { countingPglite } from './pglite-call-counter.js';
import { ONCELY_TABLE, PAYMENTS, RAW_TABLE, resetSchema, SCHEMA } from './schema.js';

/** A database twice over: direct handles for timing, counted handles for round trips. */
export interface Backend {
  /** `pg` or `PGlite`. */
  readonly label: string;
  /** What the counts mean on this backend, for the table's footnote. */
  readonly countedBy: string;
  readonly timed: DatabaseHandles;
  readonly counted: DatabaseHandles;
  readonly counter: TrafficCounter;
  /**
   * Puts a fresh driver instance, every connection open, behind the timed handles (the contenders and
   * their engines stay), for a driver whose instance slows down with use (postgres.js 3.4, see
   * {@link postgresJsBackend}); undefined where the handles stay as fast as they started.
   */
  readonly renew?: () => Promise<void>;
  /** Concurrency levels worth timing: PGlite is one embedded connection. */
  readonly concurrencies: readonly number[];
  /** Empties the bench tables between workloads, so every workload starts from the same size. */
  truncate(): Promise<void>;
  /** Payment rows committed for keys starting with `prefix`. */
  paymentRows(prefix: string): Promise<number>;
  close(): Promise<void>;
}

// CASCADE: the flow tables reference both records tables.
const TRUNCATE = `TRUNCATE ${SCHEMA}.${ONCELY_TABLE}, ${SCHEMA}.${RAW_TABLE}, ${PAYMENTS} CASCADE`;
const COUNT_PAYMENTS = `SELECT count(*)::int AS n FROM ${PAYMENTS} WHERE idempotency_key LIKE $1 || '%'`;

/** The shared PostgreSQL server: a pool for timing, a second pool behind the counting proxy. */
export async function pgBackend(databaseUrl: string, poolSize: number): Promise<Backend> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  let proxy: PgRoundTripProxy | undefined;
  let countedPool: pg.Pool | undefined;
  try {
    await resetSchema(pool, (statement) => pool.query(statement));
    proxy = await startPgRoundTripProxy(databaseUrl);
    countedPool = new pg.Pool({ connectionString: proxy.url, max: 2 });
  } catch (error) {
    await countedPool?.end();
    await proxy?.close();
    await pool.end();
    throw error;
  }
  const counting = proxy;
  const countedHandles = countedPool;
  return {
    label: 'pg',
    countedBy: 'a TCP proxy in front of PostgreSQL: round trips are the times the client waited (`pg` sends one request at a time), statements are `Query` + `Execute` messages',
    timed: { db: pool, raw: pool, transaction: pgTransaction(pool) },
    counted: { db: countedHandles, raw: countedHandles, transaction: pgTransaction(countedHandles) },
    counter: () => counting.traffic(),
    concurrencies: [1, 32],
    truncate: async () => {
      await pool.query(TRUNCATE);
    },
    paymentRows: async (prefix) => (await pool.query<{ n: number }>(COUNT_PAYMENTS, [prefix])).rows[0]!.n,
    async close() {
      await countedHandles.end();
      await counting.close();
      await pool.end();
    },
  };
}

/** postgres.js's statements through `unsafe`, prepared as its tagged templates are. */
const postgresJsQueryable = (sql: postgres.Sql): Queryable => ({
  query: async (text, params) => ({ rows: await sql.unsafe(text, (params ?? []) as postgres.ParameterOrJSON<never>[], { prepare: true }) }),
});

/** A postgres.js `sql` that forwards calls, tagged templates and member reads to whichever instance `target()` returns. */
function forwardingSql(target: () => postgres.Sql): postgres.Sql {
  return new Proxy((() => undefined) as unknown as postgres.Sql, {
    apply: (_, self, args) => Reflect.apply(target() as unknown as (...args: unknown[]) => unknown, self, args),
    get: (_, property) => Reflect.get(target(), property),
    has: (_, property) => Reflect.has(target(), property),
  });
}

/** postgres.js without its notices on stdout. */
const QUIET = { onnotice: () => undefined };

/** A postgres.js instance of `max` connections, each one opened before it is returned (postgres.js connects on first use). */
async function openPostgresJs(databaseUrl: string, max: number): Promise<postgres.Sql> {
  const sql = postgres(databaseUrl, { max, ...QUIET });
  // As many statements at once as connections: each one that finds none idle opens one.
  await Promise.all(Array.from({ length: max }, () => sql.unsafe('SELECT pg_sleep(0.005)')));
  return sql;
}

/**
 * The shared PostgreSQL server through postgres.js: an instance for timing, a second behind the
 * counting proxy. The timed handles get a fresh instance before every run: a postgres.js 3.4
 * instance slows down for as long as more queries are in flight than it has connections (its
 * connection queues keep a hole per query; see the README).
 */
export async function postgresJsBackend(databaseUrl: string, poolSize: number): Promise<Backend> {
  let current = postgres(databaseUrl, { max: poolSize, ...QUIET });
  const sql = forwardingSql(() => current);
  let proxy: PgRoundTripProxy | undefined;
  let counted: postgres.Sql | undefined;
  try {
    await resetSchema(sql, (statement) => sql.unsafe(statement));
    proxy = await startPgRoundTripProxy(databaseUrl);
    counted = postgres(proxy.url, { max: 2, ...QUIET });
  } catch (error) {
    await counted?.end();
    await proxy?.close();
    await sql.end();
    throw error;
  }
  const counting = proxy;
  const countedSql = counted;
  return {
    label: 'postgres.js',
    countedBy:
      'a TCP proxy in front of PostgreSQL: round trips are the times the client waited (requests written together, pipelined, are one), statements are `Query` + `Execute` messages',
    timed: { db: sql, raw: postgresJsQueryable(sql), transaction: postgresJsTransaction(sql) },
    counted: { db: countedSql, raw: postgresJsQueryable(countedSql), transaction: postgresJsTransaction(countedSql) },
    counter: () => counting.traffic(),
    concurrencies: [1, 32],
    async renew() {
      const spent = current;
      current = await openPostgresJs(databaseUrl, poolSize);
      await spent.end();
    },
    truncate: async () => {
      await sql.unsafe(TRUNCATE);
    },
    paymentRows: async (prefix) => (await sql.unsafe<{ n: number }[]>(COUNT_PAYMENTS, [prefix]))[0]!.n,
    async close() {
      await countedSql.end();
      await counting.close();
      await sql.end();
    },
  };
}

/** An in-memory PGlite; the counted handles are the same instance seen through a counting proxy. */
export async function pgliteBackend(): Promise<Backend> {
  const db = await PGlite.create();
  await resetSchema(db, (statement) => db.exec(statement));
  const counting = countingPglite(db);
  return {
    label: 'PGlite',
    countedBy: 'calls into PGlite (`query`, `exec`, plus the BEGIN and COMMIT/ROLLBACK its `transaction()` sends itself): there is no socket',
    timed: { db, raw: db, transaction: pgliteTransaction(db) },
    counted: { db: counting.db, raw: counting.db, transaction: pgliteTransaction(counting.db) },
    counter: () => counting.calls(),
    concurrencies: [1],
    truncate: async () => {
      await db.exec(TRUNCATE);
    },
    paymentRows: async (prefix) => (await db.query<{ n: number }>(COUNT_PAYMENTS, [prefix])).rows[0]!.n,
    close: () => db.close(),
  };
}
