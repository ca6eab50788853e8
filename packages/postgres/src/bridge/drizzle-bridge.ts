import { OncelyError } from '@oncely/core';
import { entityKind, type SQL, sql } from 'drizzle-orm';
import type { PgPoolLike } from '../driver/postgres-db.js';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
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

/** The entity kind of a Drizzle database's session: `NodePgSession`, `PgliteSession`, … */
const sessionKind = (db: unknown) => String((db as { session?: { constructor?: Record<symbol, unknown> } }).session?.constructor?.[entityKind]);

/** Drizzle's node-postgres database: its session is a `NodePgSession` (Drizzle's entity kind names it). */
const isNodePg = (db: unknown) => sessionKind(db) === 'NodePgSession';

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
    query: async (on, text, params) => sqlResult(await (on as DrizzlePgDatabase).execute(drizzleStatement(text, params))),
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
  };
}
