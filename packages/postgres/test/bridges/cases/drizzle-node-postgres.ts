import { drizzleBridge } from '@oncely/postgres/drizzle';
import { sql } from 'drizzle-orm';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { bigserial, integer, pgSchema, text } from 'drizzle-orm/pg-core';
import pg from 'pg';
import type { BridgeCase } from './bridge-case.js';

/** The business table, declared with Drizzle in the suite's schema. */
export const payments = (schema: string) =>
  pgSchema(schema).table('bridge_payments', {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    key: text('idem_key').notNull(),
    amount: integer('amount').notNull(),
  });

type Db = NodePgDatabase;
type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/** Drizzle on node-postgres (`drizzle-orm/node-postgres` over a `pg.Pool`). */
export const drizzleNodePostgres: BridgeCase<Db, Tx> = {
  name: 'drizzle (node-postgres)',
  bridge: drizzleBridge<Db>(),
  async open(url, max) {
    const pool = new pg.Pool({ connectionString: url, max });
    pool.on('error', () => undefined);
    return { db: drizzle(pool), close: () => pool.end() };
  },
  async insert(tx, schema, row) {
    const [inserted] = await tx.insert(payments(schema)).values(row).returning({ id: payments(schema).id });
    return String(inserted!.id);
  },
  // Drizzle's nested transaction is a savepoint: tx.transaction(…).
  nesting: 'savepoint',
  nested: (tx, work) => tx.transaction((inner) => work(inner)),
  async backendPid(tx) {
    const result = await tx.execute<{ pid: number }>(sql`SELECT pg_backend_pid() AS pid`);
    return result.rows[0]!.pid;
  },
};

export default drizzleNodePostgres;
