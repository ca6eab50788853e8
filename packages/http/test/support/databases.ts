import { PGlite } from '@electric-sql/pglite';
import { migrate, type PostgresDb } from '@oncely/postgres';
import pg from 'pg';

/** The shared PostgreSQL server; tests write only inside schemas they create and drop. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A database the transactional tests run on: real PostgreSQL through `pg`, or embedded PGlite. */
export interface TestDatabase {
  readonly name: 'postgres' | 'pglite';
  readonly db: PostgresDb;
  /** Runs one statement outside oncely, to count what reached the database. */
  rows<R>(text: string): Promise<R[]>;
  /** A fresh schema holding oncely's table and a `jobs` table. */
  createSchema(): Promise<string>;
  close(): Promise<void>;
}

const schemaName = () => `oncely_http_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;

async function prepare(db: PostgresDb, schema: string, run: (text: string) => Promise<unknown>): Promise<void> {
  await migrate(db, { schema });
  await run(`CREATE TABLE "${schema}".jobs (
    id bigserial PRIMARY KEY,
    tenant text NOT NULL,
    kind text NOT NULL,
    status text NOT NULL DEFAULT 'queued')`);
}

/** Real PostgreSQL: a pool, and every schema it created dropped on close. */
export function postgresDatabase(): TestDatabase {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 12 });
  pool.on('error', () => undefined);
  const schemas: string[] = [];
  return {
    name: 'postgres',
    db: pool,
    rows: async <R>(text: string) => (await pool.query(text)).rows as R[],
    async createSchema() {
      const schema = schemaName();
      schemas.push(schema);
      await prepare(pool, schema, (text) => pool.query(text));
      return schema;
    },
    async close() {
      for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

/** Embedded PGlite (what the demo runs on): one instance, a schema per test. */
export function pgliteDatabase(): TestDatabase {
  const db = new PGlite();
  return {
    name: 'pglite',
    db,
    rows: async <R>(text: string) => (await db.query<R>(text)).rows,
    async createSchema() {
      const schema = schemaName();
      await prepare(db, schema, (text) => db.query(text));
      return schema;
    },
    close: () => db.close(),
  };
}
