import { drizzleBridge } from '@oncely/postgres/drizzle';
import { sql } from 'drizzle-orm';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { BridgeCase } from './bridge-case.js';
import { payments } from './drizzle-node-postgres.js';

type Db = PostgresJsDatabase;
type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/** Drizzle on postgres.js (`drizzle-orm/postgres-js` over a `postgres()` client). */
export const drizzlePostgresJs: BridgeCase<Db, Tx> = {
  name: 'drizzle (postgres.js)',
  bridge: drizzleBridge<Db>(),
  async open(url, max) {
    const client = postgres(url, { max, onnotice: () => undefined });
    return { db: drizzle(client), close: () => client.end({ timeout: 5 }) };
  },
  async insert(tx, schema, row) {
    const [inserted] = await tx.insert(payments(schema)).values(row).returning({ id: payments(schema).id });
    return String(inserted!.id);
  },
  // Drizzle's nested transaction is a savepoint: tx.transaction(…).
  nesting: 'savepoint',
  nested: (tx, work) => tx.transaction((inner) => work(inner)),
  async backendPid(tx) {
    const [row] = await tx.execute<{ pid: number }>(sql`SELECT pg_backend_pid() AS pid`);
    return row!.pid;
  },
};

export default drizzlePostgresJs;
