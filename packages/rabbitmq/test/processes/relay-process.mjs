// An outbox relay in its own OS process, importing the built packages as users do: PostgreSQL
// outbox → RabbitMQ quorum queues. It reports named points over IPC; the parent decides when it dies.
import { createRelay } from '@oncely/core/outbox';
import { postgresOutbox } from '@oncely/postgres';
import { rabbitPublisher } from '@oncely/rabbitmq';
import amqp from 'amqplib';
import pg from 'pg';

const config = JSON.parse(process.argv[2]);
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 4, application_name: config.relayId });
pool.on('error', () => undefined);
// A reconnecting connection: channels are reopened on it after a broker restart.
const connection = await amqp.connect(config.amqpUrl, { recovery: { initialDelay: 100, maxDelay: 1_000 } });
connection.on('error', () => undefined);
const outbox = postgresOutbox({ db: pool, schema: config.schema });
const rabbit = rabbitPublisher({ connection, queue: config.queue, buckets: config.buckets });

// The named point: the broker has confirmed the batch, the outbox has not been told yet.
const publisher =
  config.pauseAt === 'published'
    ? {
        name: rabbit.name,
        async publish(events, signal) {
          const outcomes = await rabbit.publish(events, signal);
          process.send({ point: 'published', eventIds: events.map((event) => event.eventId) });
          await new Promise(() => undefined);
          return outcomes;
        },
      }
    : rabbit;

const relay = createRelay({
  source: outbox.source,
  publisher,
  id: config.relayId,
  batchSize: config.batchSize ?? 100,
  leaseMs: config.leaseMs ?? 1_000,
  publishTimeoutMs: 500,
  pollIntervalMs: 100,
  maxAttempts: 1_000,
  backoff: { baseMs: 50, capMs: 1_000 },
  errorBackoff: { baseMs: 50, capMs: 1_000 },
  statsIntervalMs: 0,
  purge: false,
});

process.on('message', async (message) => {
  if (message === 'stop') {
    await relay.stop();
    await rabbit.close();
    await connection.close().catch(() => undefined);
    await pool.end();
    process.exit(0);
  }
});

relay.start();
process.send({ point: 'started' });
