import { migrate, type PostgresDb } from '@oncely/postgres';

/** Schema holding every table of one bench run. */
export const SCHEMA = 'bench';
/** oncely's records. */
export const ONCELY_TABLE = 'oncely_idempotency';
/** The raw baseline's records: the same shipped DDL under another name. */
export const RAW_TABLE = 'raw_idempotency';
/** The business table both sides write. */
export const PAYMENTS = `${SCHEMA}.payments`;

/** Runs `statement` with no parameters on either driver. */
type Exec = (statement: string) => Promise<unknown>;

/**
 * Recreates the bench schema: oncely's shipped migrations twice (once renamed for the raw baseline,
 * so both sides write identical tables and indexes) and the business table.
 */
export async function resetSchema(db: PostgresDb, exec: Exec): Promise<void> {
  await exec(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await migrate(db, { schema: SCHEMA });
  await migrate(db, { schema: SCHEMA, tables: { oncely_idempotency: RAW_TABLE } });
  await exec(`CREATE TABLE ${PAYMENTS} (
    id text PRIMARY KEY,
    idempotency_key text NOT NULL,
    amount integer NOT NULL,
    currency text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`);
}
