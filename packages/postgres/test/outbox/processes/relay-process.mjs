// An outbox relay in its own OS process, importing the built packages as users do. It publishes
// from the Postgres outbox to Redis streams and reports named points over IPC; the parent decides
// when it dies (SIGKILL: no cleanup, its leases simply lapse).
import { createRelay } from '@oncely/core/outbox';
import { postgresOutbox } from '@oncely/postgres';
import { partitionOf, redisStreamPublisher } from '@oncely/redis';
import { Redis } from 'ioredis';
import pg from 'pg';

const config = JSON.parse(process.argv[2]);
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 4, application_name: config.relayId });
pool.on('error', () => undefined);
const redis = new Redis(config.redisUrl);
const outbox = postgresOutbox({ db: pool, schema: config.schema, table: config.table });
const streams = redisStreamPublisher({
  client: redis,
  stream: (event) => `${config.streamPrefix}${partitionOf(event.aggregateId, config.partitions)}`,
});

// The named point: the broker has acknowledged the batch, the outbox has not been told yet.
const publisher =
  config.pauseAt === 'published'
    ? {
        name: streams.name,
        async publish(events, signal) {
          await streams.publish(events, signal);
          process.send({ point: 'published', eventIds: events.map((event) => event.eventId) });
          return new Promise(() => undefined);
        },
      }
    : streams;

const relay = createRelay({
  source: outbox.source,
  publisher,
  id: config.relayId,
  batchSize: config.batchSize,
  leaseMs: config.leaseMs,
  pollIntervalMs: config.pollIntervalMs,
  statsIntervalMs: 0,
  purge: false,
});

process.on('message', async (message) => {
  if (message === 'stop') {
    await relay.stop();
    await pool.end();
    redis.disconnect();
    process.exit(0);
  }
});

relay.start();
process.send({ point: 'started' });
