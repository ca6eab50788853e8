import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { NewOutboxEvent } from '@oncely/core/outbox';
import { migrate, type PostgresOutbox, postgresOutbox, sqlDriver } from '@oncely/postgres';
import pg from 'pg';
import { ensureNatsStream } from '../../src/index.js';
import { uniqueName } from './nats-server.js';

/** The shared PostgreSQL; every pipeline writes only inside a schema of its own. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export function createPool(): pg.Pool {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 8 });
  pool.on('error', () => undefined);
  return pool;
}

/** A credit to `account`: the event every pipeline test sends. */
export const credit = (account: string, amount = 1): NewOutboxEvent => ({
  aggregateType: 'account',
  aggregateId: account,
  eventType: 'account.credited.v1',
  payload: { amount },
});

/**
 * An outbox → relay → JetStream → consumer → inbox pipeline in a schema and a stream of its own: the
 * configuration the relay and consumer processes take, and the raw reads the tests assert on.
 */
export async function createPipeline(pool: pg.Pool, nc: NatsConnection, natsUrl: string, label: string, buckets: number) {
  const schema = uniqueName(label);
  const stream = uniqueName(`${label}s`);
  const subject = `${stream}.ev`;
  await migrate(pool, { schema });
  await pool.query(`CREATE TABLE "${schema}".applied (
    id bigserial PRIMARY KEY, consumer text NOT NULL, event_id text NOT NULL, aggregate_id text NOT NULL, aggregate_seq bigint NOT NULL)`);
  await ensureNatsStream(nc, { name: stream, subjects: [`${subject}.*`, `${subject}-dead`] });
  const outbox: PostgresOutbox = postgresOutbox({ db: pool, schema });
  const driver = sqlDriver(pool);
  const bucketList = Array.from({ length: buckets }, (_, bucket) => bucket);
  return {
    schema,
    stream,
    subject,
    outbox,
    relayConfig: (extra: Record<string, unknown> = {}) => ({
      databaseUrl: DATABASE_URL,
      natsUrl,
      schema,
      stream,
      subject,
      buckets,
      relayId: uniqueName('relay'),
      ...extra,
    }),
    consumerConfig: (extra: Record<string, unknown> = {}) => ({
      databaseUrl: DATABASE_URL,
      natsUrl,
      schema,
      stream,
      subject,
      buckets: bucketList,
      name: uniqueName('consumer'),
      ...extra,
    }),
    async enqueue(events: readonly NewOutboxEvent[]) {
      await driver.transaction(async (tx) => {
        for (const event of events) await outbox.enqueue(tx, event);
        return { action: 'commit', value: undefined };
      });
    },
    async unpublished(): Promise<number> {
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${outbox.table} WHERE published_at IS NULL`);
      return rows[0].n;
    },
    async applied(): Promise<{ event_id: string; aggregate_id: string; aggregate_seq: number }[]> {
      const { rows } = await pool.query(`SELECT event_id, aggregate_id, aggregate_seq::int AS aggregate_seq FROM "${schema}".applied ORDER BY id`);
      return rows;
    },
    async streamMessages(): Promise<number> {
      return (await (await jetstreamManager(nc)).streams.info(stream)).state.messages;
    },
    async close() {
      await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}

export type Pipeline = Awaited<ReturnType<typeof createPipeline>>;

/**
 * Every event applied exactly once and each aggregate's events applied in sequence order: returns
 * what is wrong, or nothing.
 */
export function exactlyOnceInOrder(applied: readonly { event_id: string; aggregate_id: string; aggregate_seq: number }[], expected: number): string[] {
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
