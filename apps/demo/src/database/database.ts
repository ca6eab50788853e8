import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import type { PostgresTx, SqlResult } from '@oncely/postgres';
import pg from 'pg';
import type { DatabaseTarget } from '../cli/service-config.js';
import { SCHEMA } from './sql.js';

/**
 * Anything that runs a parameterized query: the database, or an open transaction. It is
 * @oncely/postgres's `tx` handle, so the outbox and the inbox write in the demo's own transactions.
 */
export type Queryable = PostgresTx;

function fromPg<R>(result: pg.QueryResult): SqlResult<R> {
  return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length };
}

function fromPglite<R>(result: { rows: unknown[]; affectedRows?: number }): SqlResult<R> {
  return { rows: result.rows as R[], rowCount: result.affectedRows ?? result.rows.length };
}

/** The driver underneath, for adapters that take the client itself. */
export type Driver = { readonly kind: 'pglite'; readonly client: PGlite } | { readonly kind: 'postgres'; readonly pool: pg.Pool };

/** The business database: accounts, payments, outbox, inbox, invoice lines. */
export interface Database extends Queryable {
  readonly driver: Driver;
  /** Schema every demo table lives in (first on the search_path). */
  readonly schema: string;
  /** Runs `work` in one transaction: commits when it resolves, rolls back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs a parameterless script of several statements. */
  exec(script: string): Promise<void>;
  close(): Promise<void>;
}

/** Schema of the embedded database; PostgreSQL takes it from --schema. */
const PGLITE_SCHEMA = 'oncely_demo';

/**
 * Opens the business database and creates the demo's tables. Every table lives in one schema the
 * demo owns, put first on the search_path, so `--reset` is one DROP SCHEMA and nothing else is touched.
 */
export async function openDatabase(target: DatabaseTarget, options: { readonly reset: boolean }): Promise<Database> {
  const database = target.kind === 'pglite' ? await openPglite(target.dataDir, options.reset) : await openPostgres(target.url, target.schema, options.reset);
  await database.exec(SCHEMA);
  return database;
}

function schemaStatements(schema: string, reset: boolean): string {
  const create = `CREATE SCHEMA IF NOT EXISTS ${schema}`;
  return reset ? `DROP SCHEMA IF EXISTS ${schema} CASCADE; ${create}` : create;
}

async function openPglite(dataDir: string, reset: boolean): Promise<Database> {
  await mkdir(dataDir, { recursive: true });
  const client = await PGlite.create({ dataDir });
  // PGlite is one session: setting the search_path once covers every later query.
  await client.exec(`${schemaStatements(PGLITE_SCHEMA, reset)}; SET search_path TO ${PGLITE_SCHEMA}`);
  return {
    driver: { kind: 'pglite', client },
    schema: PGLITE_SCHEMA,
    query: async (text, params) => fromPglite(await client.query(text, params && [...params])),
    transaction: (work) =>
      client.transaction((tx) => work({ query: async (text, params) => fromPglite(await tx.query(text, params && [...params])) })),
    exec: async (script) => {
      await client.exec(script);
    },
    close: () => client.close(),
  };
}

async function openPostgres(url: string, schema: string, reset: boolean): Promise<Database> {
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  try {
    await setup.query(schemaStatements(schema, reset));
  } finally {
    await setup.end();
  }
  const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 10 });
  return {
    driver: { kind: 'postgres', pool },
    schema,
    query: async (text, params) => fromPg(await pool.query(text, params && [...params])),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work({ query: async (text, params) => fromPg(await client.query(text, params && [...params])) });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    exec: async (script) => {
      await pool.query(script);
    },
    close: () => pool.end(),
  };
}
