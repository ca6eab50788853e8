import type { NewOutboxEvent } from '@oncely/core/outbox';
import pg from 'pg';

/** The shared PostgreSQL; every pipeline writes only inside a schema of its own. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A pool on the shared PostgreSQL whose idle connections may drop without crashing the test process. */
export function createPool(): pg.Pool {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 8 });
  pool.on('error', () => undefined);
  return pool;
}

/** What the tables need of a PostgreSQL outbox. */
export interface OutboxTable {
  readonly table: string;
  enqueue(tx: unknown, event: NewOutboxEvent): Promise<unknown>;
}

/**
 * What a pipeline takes from `@oncely/postgres` (pass the module: `import * as postgres from
 * '@oncely/postgres'`). Handed in, not imported: postgres's own tests depend on this package.
 */
export interface PostgresModule<Outbox extends OutboxTable = OutboxTable> {
  migrate(db: pg.Pool, options: { schema: string }): Promise<unknown>;
  postgresOutbox(options: { db: pg.Pool; schema: string }): Outbox;
  sqlDriver(db: pg.Pool): { transaction<T>(work: (tx: unknown) => Promise<{ readonly action: 'commit'; readonly value: T }>): Promise<T> };
}

/** A row of the consumer's business table: one per applied event, in the order applied. */
export interface AppliedRow {
  readonly event_id: string;
  readonly aggregate_id: string;
  readonly aggregate_seq: number;
}

/**
 * The PostgreSQL half of an outbox → broker → inbox pipeline, in `schema`: the outbox and inbox
 * (migrated), the `applied` table the consumer processes write, and the raw reads tests assert on.
 */
export async function outboxTables<Outbox extends OutboxTable>(pool: pg.Pool, schema: string, postgres: PostgresModule<Outbox>) {
  await postgres.migrate(pool, { schema });
  await pool.query(`CREATE TABLE "${schema}".applied (
    id bigserial PRIMARY KEY, consumer text NOT NULL, event_id text NOT NULL, aggregate_id text NOT NULL, aggregate_seq bigint NOT NULL)`);
  const outbox = postgres.postgresOutbox({ db: pool, schema });
  const driver = postgres.sqlDriver(pool);
  /** Enqueues `events` in one committed transaction. */
  const enqueue = async (events: readonly NewOutboxEvent[]): Promise<void> => {
    await driver.transaction(async (tx) => {
      for (const event of events) await outbox.enqueue(tx, event);
      return { action: 'commit', value: undefined };
    });
  };
  return {
    schema,
    outbox,
    enqueue,
    async unpublished(): Promise<number> {
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${outbox.table} WHERE published_at IS NULL`);
      return rows[0].n;
    },
    async applied(): Promise<AppliedRow[]> {
      const { rows } = await pool.query(`SELECT event_id, aggregate_id, aggregate_seq::int AS aggregate_seq FROM "${schema}".applied ORDER BY id`);
      return rows;
    },
    /** Enqueues `event` alone and resolves its event id. */
    async enqueueOne(event: NewOutboxEvent): Promise<string> {
      await enqueue([event]);
      const { rows } = await pool.query(`SELECT event_id FROM ${outbox.table} ORDER BY position DESC LIMIT 1`);
      return rows[0].event_id;
    },
    async isPublished(eventId: string): Promise<boolean> {
      const { rows } = await pool.query(`SELECT published_at IS NOT NULL AS published FROM ${outbox.table} WHERE event_id = $1`, [eventId]);
      return rows[0].published;
    },
    async drop(): Promise<void> {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}

/**
 * Every event applied exactly once and each aggregate's events applied in sequence order: returns
 * what is wrong (at most ten lines), or nothing.
 */
export function exactlyOnceInOrder(applied: readonly AppliedRow[], expected: number): string[] {
  const problems: string[] = [];
  const ids = new Set(applied.map((row) => row.event_id));
  if (ids.size !== applied.length) problems.push(`${applied.length - ids.size} events applied twice`);
  if (ids.size !== expected) problems.push(`${ids.size} distinct events applied, expected ${expected}`);
  const last = new Map<string, number>();
  for (const row of applied) {
    const previous = last.get(row.aggregate_id) ?? 0;
    if (row.aggregate_seq !== previous + 1) problems.push(`${row.aggregate_id}: seq ${row.aggregate_seq} applied after ${previous}`);
    last.set(row.aggregate_id, row.aggregate_seq);
  }
  return problems.slice(0, 10);
}
