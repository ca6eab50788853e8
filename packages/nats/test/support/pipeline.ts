import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import * as postgres from '@oncely/postgres';
import { DATABASE_URL, outboxTables } from '@oncely/test-support';
import type pg from 'pg';
import { ensureNatsStream } from '../../src/index.js';
import { uniqueName } from './nats-server.js';

/**
 * An outbox → relay → JetStream → consumer → inbox pipeline in a schema and a stream of its own: the
 * configuration the relay and consumer processes take, and the raw reads the tests assert on.
 */
export async function createPipeline(pool: pg.Pool, nc: NatsConnection, natsUrl: string, label: string, buckets: number) {
  const stream = uniqueName(`${label}s`);
  const subject = `${stream}.ev`;
  const tables = await outboxTables(pool, uniqueName(label), postgres);
  await ensureNatsStream(nc, { name: stream, subjects: [`${subject}.*`, `${subject}-dead`] });
  const bucketList = Array.from({ length: buckets }, (_, bucket) => bucket);
  return {
    ...tables,
    stream,
    subject,
    relayConfig: (extra: Record<string, unknown> = {}) => ({
      databaseUrl: DATABASE_URL,
      natsUrl,
      schema: tables.schema,
      stream,
      subject,
      buckets,
      relayId: uniqueName('relay'),
      ...extra,
    }),
    consumerConfig: (extra: Record<string, unknown> = {}) => ({
      databaseUrl: DATABASE_URL,
      natsUrl,
      schema: tables.schema,
      stream,
      subject,
      buckets: bucketList,
      name: uniqueName('consumer'),
      ...extra,
    }),
    async streamMessages(): Promise<number> {
      return (await (await jetstreamManager(nc)).streams.info(stream)).state.messages;
    },
    async close() {
      await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
      await tables.drop();
    },
  };
}

export type Pipeline = Awaited<ReturnType<typeof createPipeline>>;
