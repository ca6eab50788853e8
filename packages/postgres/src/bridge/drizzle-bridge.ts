import { OncelyError } from '@oncely/core';
import { entityKind, type SQL, sql } from 'drizzle-orm';
import type { PgPoolLike, PostgresJsLike, PostgresJsSqlLike } from '../driver/postgres-db.js';
import { isPostgresJs } from '../driver/postgresjs-driver.js';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { withSavepoints } from './postgresjs-savepoints.js';
import { splitParameters, sqlResult } from './sql-result.js';
import type { TransactionBridge } from './transaction-bridge.js';

/** Any Drizzle PostgreSQL database: node-postgres, postgres.js, PGlite, … (`PgTransaction` is one too). */
// biome-ignore lint/suspicious/noExplicitAny: any schema, any driver.
export type DrizzlePgDatabase = PgDatabase<PgQueryResultHKT, any, any>;

/** The transaction object `db.transaction` hands its callback, with the database's own schema and driver types. */
export type DrizzleTransaction<Db extends DrizzlePgDatabase> = Parameters<Parameters<Db['transaction']>[0]>[0];

/** What Drizzle's node-postgres session holds (its own fields, read to build a transaction over a held connection). */
interface DrizzleSessionParts {
  readonly dialect: unknown;
  readonly schema: unknown;
  readonly options: unknown;
}

/** The entity kind of `db`'s session (`NodePgSession`, `PostgresJsSession`, …): Drizzle's own name for its driver. */
const sessionKind = (db: unknown) => {
  const session = (db as { session?: { constructor?: Record<symbol, unknown> } }).session;
  return String(session?.constructor?.[entityKind]);
};

/** Drizzle's node-postgres database: its session is a `NodePgSession`. */
const isNodePg = (db: unknown) => sessionKind(db) === 'NodePgSession';

/**
 * The `postgres()` instance under a Drizzle postgres.js database (a transaction's session holds a
 * scoped `sql` without `reserve`, so it is not one), or undefined. With `fetch_types: false`
 * postgres.js cannot reserve a connection: Drizzle's own `sql.begin` stays.
 */
function postgresJsOf(db: unknown): PostgresJsLike | undefined {
  if (sessionKind(db) !== 'PostgresJsSession') return undefined;
  const client = (db as { session: { client?: unknown } }).session.client;
  return isPostgresJs(client) && client.options?.fetch_types !== false ? client : undefined;
}

/** A statement with `$n` parameters as a Drizzle `sql` query: every `$n` becomes a bound parameter, never text. */
export function drizzleStatement(text: string, params: readonly unknown[]): SQL {
  const { parts, indexes } = splitParameters(text);
  const chunks: SQL[] = [];
  parts.forEach((part, at) => {
    chunks.push(sql.raw(part));
    const index = indexes[at];
    if (index !== undefined) chunks.push(sql`${sql.param(params[index])}`);
  });
  return sql.join(chunks);
}

/**
 * The Drizzle bridge, on every PostgreSQL driver Drizzle runs on (node-postgres, postgres.js,
 * PGlite): oncely's statements go through `db.execute` / `tx.execute`, its transactions are
 * `db.transaction`, and handlers get Drizzle's `tx`, typed with your schema:
 *
 * ```ts
 * const store = postgresStore({ db, bridge: drizzleBridge<typeof db>() });
 * await idempotency.runInTransaction(request, async ({ tx }) => { await tx.insert(payments).values(row); … });
 * ```
 */
export function drizzleBridge<Db extends DrizzlePgDatabase = DrizzlePgDatabase>(): TransactionBridge<Db, DrizzleTransaction<Db>> {
  return {
    name: 'drizzle',
    transaction: (db, work) => {
      if (typeof db?.transaction !== 'function') throw new OncelyError('invalid_option', 'oncely/postgres: drizzleBridge needs a Drizzle PostgreSQL database as db');
      return db.transaction((tx) => work(tx as DrizzleTransaction<Db>));
    },
    query: async (on, text, params) => {
      // On postgres.js, named and prepared per connection: Drizzle's unnamed statements wait for a Describe first, a round trip more each.
      const postgresJs = sessionKind(on) === 'PostgresJsSession' ? (on as unknown as { session: { client: PostgresJsSqlLike } }).session.client : undefined;
      if (postgresJs) return sqlResult(await postgresJs.unsafe(text, [...params], { prepare: true }));
      return sqlResult(await (on as DrizzlePgDatabase).execute(drizzleStatement(text, params)));
    },
    // On PGlite a replay is then one call with no transaction, as on oncely's own PGlite driver.
    readsFirst: (db) => sessionKind(db) === 'PgliteSession',
    pg: {
      pool: (db) => {
        const client = (db as { $client?: unknown }).$client as Partial<PgPoolLike> | undefined;
        // node-postgres on a pg.Pool only: postgres.js, PGlite and a single pg.Client keep Drizzle's own transaction.
        return typeof client?.connect === 'function' && typeof client.totalCount === 'number' && isNodePg(db) ? (client as PgPoolLike) : undefined;
      },
      async transactionOn(db, client) {
        // Loaded only here, where pg is installed: the node-postgres flavour of Drizzle's session and transaction.
        const { NodePgSession, NodePgTransaction } = await import('drizzle-orm/node-postgres');
        const session = (db as unknown as { session: DrizzleSessionParts }).session;
        const held = new NodePgSession(client as never, session.dialect as never, session.schema as never, session.options as never);
        return new NodePgTransaction(session.dialect as never, held, session.schema as never) as unknown as DrizzleTransaction<Db>;
      },
    },
    // On postgres.js the store reserves a connection and pipelines its read and claim + BEGIN; the
    // handler gets Drizzle's postgres.js transaction over that connection's sql, savepoints included.
    postgresJs: {
      sql: postgresJsOf,
      async transactionOn(db, reserved) {
        const { PostgresJsSession, PostgresJsTransaction } = await import('drizzle-orm/postgres-js');
        const session = (db as unknown as { session: DrizzleSessionParts }).session;
        const held = new PostgresJsSession(withSavepoints(reserved) as never, session.dialect as never, session.schema as never, session.options as never);
        return new PostgresJsTransaction(session.dialect as never, held, session.schema as never) as unknown as DrizzleTransaction<Db>;
      },
    },
  };
}
