import pg from 'pg';

/** The database the bench owns on a shared server: created when a suite needs it, dropped when the run ends. */
export const BENCH_DATABASE = 'oncely_bench';

/** Creates {@link BENCH_DATABASE} next to the database of `serverUrl` if missing; returns its URL. */
export async function ensureBenchDatabase(serverUrl: string): Promise<string> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [BENCH_DATABASE]);
    if (rows.length === 0) {
      try {
        await admin.query(`CREATE DATABASE ${BENCH_DATABASE}`);
      } catch (error) {
        // 42P04 duplicate_database: a concurrent bench created it first.
        if ((error as { code?: string }).code !== '42P04') throw error;
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${BENCH_DATABASE}`;
  return url.toString();
}

/**
 * Drops {@link BENCH_DATABASE} from the server of `serverUrl`. Never throws, so cleanup cannot hide a
 * suite's error or lose a finished run: a refused drop (55006: another bench is still connected)
 * leaves the database to the run that uses it.
 */
export async function dropBenchDatabase(serverUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  try {
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DATABASE}`);
  } catch (error) {
    console.error(`bench: left database ${BENCH_DATABASE} in place: ${(error as Error).message}`);
  } finally {
    await admin.end().catch(() => undefined);
  }
}
