import * as postgres from '@oncely/postgres';
import { DATABASE_URL, outboxTables } from '@oncely/test-support';
import type pg from 'pg';
import type amqp from 'amqplib';
import { ensureRabbitQueues } from '../../src/index.js';
import { deleteQueues, uniqueName } from './rabbit-server.js';

/**
 * An outbox → relay → RabbitMQ → consumer → inbox pipeline in a schema and queues of their own: the
 * configuration the relay and consumer processes take, and the raw reads the tests assert on.
 */
export async function createPipeline(pool: pg.Pool, connection: amqp.ChannelModel, amqpUrl: string, label: string, buckets: number) {
  const queue = uniqueName(label);
  const dead = `${queue}.dead`;
  const tables = await outboxTables(pool, uniqueName(label).replaceAll('.', '_'), postgres);
  const queues = await ensureRabbitQueues(connection, { queue, buckets, deadLetterQueue: dead, deliveryLimit: 1_000 });
  return {
    ...tables,
    /** The publisher's queue name; the bucket queues are `<queue>.<bucket>`. */
    queue,
    queues,
    relayConfig: (extra: Record<string, unknown> = {}) => ({
      databaseUrl: DATABASE_URL,
      amqpUrl,
      schema: tables.schema,
      queue,
      buckets,
      relayId: uniqueName('relay'),
      ...extra,
    }),
    consumerConfig: (extra: Record<string, unknown> = {}) => ({
      databaseUrl: DATABASE_URL,
      amqpUrl,
      schema: tables.schema,
      queues,
      name: uniqueName('consumer'),
      ...extra,
    }),
    async close() {
      await deleteQueues(connection, [...queues, dead]).catch(() => undefined);
      await tables.drop();
    },
  };
}

export type Pipeline = Awaited<ReturnType<typeof createPipeline>>;
