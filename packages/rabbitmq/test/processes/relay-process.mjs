// An outbox relay in its own OS process, importing the built packages as users do: PostgreSQL
// outbox → RabbitMQ quorum queues (the body is @oncely/test-support's).
import { postgresOutbox } from '@oncely/postgres';
import { rabbitPublisher } from '@oncely/rabbitmq';
import { relayProcess } from '@oncely/test-support/processes';
import amqp from 'amqplib';

await relayProcess({
  outbox: (pool, config) => postgresOutbox({ db: pool, schema: config.schema }),
  async transport(config) {
    // A reconnecting connection: channels are reopened on it after a broker restart.
    const connection = await amqp.connect(config.amqpUrl, { recovery: { initialDelay: 100, maxDelay: 1_000 } });
    connection.on('error', () => undefined);
    const publisher = rabbitPublisher({ connection, queue: config.queue, buckets: config.buckets });
    return {
      publisher,
      relayOptions: { publishTimeoutMs: 500 },
      async close() {
        await publisher.close();
        await connection.close().catch(() => undefined);
      },
    };
  },
});
