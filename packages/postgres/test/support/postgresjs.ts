import postgres from 'postgres';
import { DATABASE_URL } from './database.js';

/** A postgres.js instance on the shared server; notices (a ROLLBACK with nothing open) stay quiet. */
export function createSql(options: postgres.Options<Record<string, postgres.PostgresType>> = {}): postgres.Sql {
  return postgres(DATABASE_URL, { max: 10, onnotice: () => undefined, ...options });
}
