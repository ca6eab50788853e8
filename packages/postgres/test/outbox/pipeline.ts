import { randomUUID } from 'node:crypto';
import type { NewOutboxEvent } from '@oncely/core/outbox';
import { parseStreamEntry } from '@oncely/redis';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { migrate, type PostgresOutbox, postgresOutbox, sqlDriver } from '../../src/index.js';
import { DATABASE_URL, dropSchema, uniqueSchema } from '../support/database.js';

/** The shared Redis: never flushed; only keys under a run's own prefix are touched. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** One stream entry, as a consumer would see it. */
export interface Entry {
  readonly stream: string;
  readonly eventId: string;
  readonly aggregateId: string;
  readonly aggregateSeq: number;
}

/**
 * An outbox → relay → Redis streams → consumer → inbox pipeline in a schema and a key prefix of its
 * own: the configuration the relay and consumer processes take, and the raw reads the tests assert on.
 */
export interface Pipeline {
  readonly schema: string;
  readonly outbox: PostgresOutbox;
  readonly redis: Redis;
  /** Stream names: `<prefix><partition>`. */
  readonly streams: readonly string[];
  relayConfig(extra?: Record<string, unknown>): Record<string, unknown>;
  consumerConfig(consumer: string, streams: readonly string[], extra?: Record<string, unknown>): Record<string, unknown>;
  /** Enqueues `events` in one committed transaction. */
  enqueue(events: readonly NewOutboxEvent[]): Promise<void>;
  unpublished(): Promise<number>;
  /** Every entry of every stream, in stream order. */
  entries(): Promise<Entry[]>;
  /** The consumer's business rows, in the order they were applied. */
  applied(): Promise<{ event_id: string; aggregate_id: string; aggregate_seq: number }[]>;
  balance(account: string): Promise<number>;
  pending(stream: string): Promise<number>;
  close(): Promise<void>;
}

/** A credit of `amount` to `account`: the event every pipeline test sends. */
export const credit = (account: string, amount: number): NewOutboxEvent => ({
  aggregateType: 'account',
  aggregateId: account,
  eventType: 'account.credited.v1',
  payload: { amount },
});

/** Creates the schema (outbox, inbox and the consumer's business tables) and a Redis prefix. */
export async function createPipeline(pool: pg.Pool, label: string, partitions = 1): Promise<Pipeline> {
  const schema = uniqueSchema(label);
  await migrate(pool, { schema });
  await pool.query(`CREATE TABLE "${schema}".applied (
    id bigserial PRIMARY KEY, consumer text NOT NULL, event_id text NOT NULL, aggregate_id text NOT NULL, aggregate_seq bigint NOT NULL)`);
  await pool.query(`CREATE TABLE "${schema}".balances (account text PRIMARY KEY, balance numeric NOT NULL)`);
  const prefix = `oncely-test:outbox:${randomUUID().slice(0, 8)}:p`;
  const streams = Array.from({ length: partitions }, (_, partition) => `${prefix}${partition}`);
  const outbox = postgresOutbox({ db: pool, schema });
  const redis = new Redis(REDIS_URL);
  const driver = sqlDriver(pool);
  return {
    schema,
    outbox,
    redis,
    streams,
    relayConfig: (extra = {}) => ({
      databaseUrl: DATABASE_URL,
      redisUrl: REDIS_URL,
      schema,
      streamPrefix: prefix,
      partitions,
      relayId: `relay-${randomUUID().slice(0, 8)}`,
      batchSize: 100,
      leaseMs: 1_000,
      pollIntervalMs: 200,
      ...extra,
    }),
    consumerConfig: (consumer, names, extra = {}) => ({
      databaseUrl: DATABASE_URL,
      redisUrl: REDIS_URL,
      schema,
      streams: names,
      name: consumer,
      ...extra,
    }),
    enqueue: (events) =>
      driver.transaction(async (tx) => {
        for (const event of events) await outbox.enqueue(tx, event);
        return { action: 'commit', value: undefined };
      }),
    async unpublished() {
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${outbox.table} WHERE published_at IS NULL`);
      return rows[0].n;
    },
    async entries() {
      const all: Entry[] = [];
      for (const stream of streams) {
        for (const [, fields] of await redis.xrange(stream, '-', '+')) {
          const parsed = parseStreamEntry(fields);
          if (parsed.kind !== 'event') throw new Error(`malformed entry in ${stream}: ${parsed.problem}`);
          const { eventId, aggregateId, aggregateSeq } = parsed.event;
          all.push({ stream, eventId, aggregateId, aggregateSeq });
        }
      }
      return all;
    },
    async applied() {
      const { rows } = await pool.query(
        `SELECT event_id, aggregate_id, aggregate_seq::int AS aggregate_seq FROM "${schema}".applied ORDER BY id`,
      );
      return rows;
    },
    async balance(account) {
      const { rows } = await pool.query(`SELECT balance::float8 AS balance FROM "${schema}".balances WHERE account = $1`, [account]);
      return rows[0]?.balance ?? 0;
    },
    async pending(stream) {
      const [count] = (await redis.xpending(stream, 'billing')) as [number];
      return Number(count);
    },
    async close() {
      if (streams.length > 0) await redis.unlink(...streams);
      redis.disconnect();
      await dropSchema(pool, schema);
    },
  };
}
