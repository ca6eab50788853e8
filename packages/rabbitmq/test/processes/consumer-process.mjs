// A consumer service in its own OS process: one consumer per bucket queue (single active consumer),
// each applying events through the PostgreSQL inbox, then acknowledging (the body is @oncely/test-support's).
import { postgresInbox } from '@oncely/postgres';
import { rabbitConsumer } from '@oncely/rabbitmq';
import { consumerProcess } from '@oncely/test-support/processes';
import amqp from 'amqplib';

await consumerProcess({
  inbox: (pool, config) => postgresInbox({ db: pool, schema: config.schema }),
  async transport(config, handle) {
    const connection = await amqp.connect(config.amqpUrl, { recovery: { initialDelay: 100, maxDelay: 1_000 } });
    connection.on('error', () => undefined);
    const consumers = config.queues.map((queue) =>
      rabbitConsumer({
        connection,
        queue,
        consumer: config.name,
        prefetch: config.prefetch ?? 20,
        maxDeliver: config.maxDeliver ?? 1_000,
        idleMs: 200,
        backoff: { baseMs: 20, capMs: 500 },
        handle,
      }),
    );
    return { consumers, close: () => connection.close().catch(() => undefined) };
  },
});
