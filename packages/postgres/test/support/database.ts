import type { Scope } from '@oncely/core';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { migrate } from '../../src/index.js';

/** The shared server the suites run against; never stopped, never dropped. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A pool on the shared server. Idle-client errors (a terminated backend) are expected in some tests. */
export function createPool(options: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10, ...options });
  pool.on('error', () => undefined);
  return pool;
}

/** A schema name no other run or engineer uses: every suite writes only inside its own. */
export function uniqueSchema(label: string): string {
  return `oncely_pg_${label}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}

/** Drops a schema this run created. */
export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** A file's own pool and schema, with the package's tables migrated into it. */
export interface MigratedSchema {
  readonly pool: pg.Pool;
  readonly schema: string;
  /** The idempotency table, qualified as the store names it. */
  readonly table: string;
}

/**
 * Registers a file's setup and teardown: migrates a fresh schema before its tests, drops it and ends
 * the pool after them. Vitest runs hooks as a stack, so hooks the file registers after this call run
 * after the migration and before the drop.
 */
export function migratedSchema(label: string, poolOptions: pg.PoolConfig = {}): MigratedSchema {
  const pool = createPool(poolOptions);
  const schema = uniqueSchema(label);
  beforeAll(async () => {
    await migrate(pool, { schema });
  });
  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });
  return { pool, schema, table: `"${schema}".oncely_idempotency` };
}

/** Reads a record's raw row behind the store's back, expired or not. */
export async function rawRecord(
  db: { query(text: string, params: unknown[]): Promise<{ rows: unknown[] }> },
  table: string,
  scope: Scope,
): Promise<{ state: string; fence: number; lease_token: string | null; response_status: number | null } | undefined> {
  const { rows } = await db.query(
    `SELECT state, fence, lease_token, response_status FROM ${table}
     WHERE tenant = $1 AND principal = $2 AND operation = $3 AND idempotency_key = $4`,
    [scope.tenant, scope.principal, scope.operation, scope.key],
  );
  return rows[0] as { state: string; fence: number; lease_token: string | null; response_status: number | null } | undefined;
}

/** BEGIN, `body(client)`, COMMIT on a client of `pool` (ROLLBACK and rethrow when `body` throws): the application's own transaction. */
export async function inClientTransaction<T>(pool: { connect(): Promise<pg.PoolClient> }, body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const value = await body(client);
    await client.query('COMMIT');
    return value;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}
