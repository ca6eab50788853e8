// An outbox relay in its own OS process, importing the built packages as users do: PostgreSQL
// outbox → NATS JetStream. It reports named points over IPC; the parent decides when it dies.
import { createRelay } from '@oncely/core/outbox';
import { natsPublisher } from '@oncely/nats';
import { postgresOutbox } from '@oncely/postgres';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';

const config = JSON.parse(process.argv[2]);
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 4, application_name: config.relayId });
pool.on('error', () => undefined);
const nc = await connect({ servers: config.natsUrl, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
const outbox = postgresOutbox({ db: pool, schema: config.schema });
const nats = natsPublisher({ connection: nc, subject: config.subject, buckets: config.buckets, stream: config.stream, timeoutMs: 2_000 });

// The named point: the stream has acknowledged the batch, the outbox has not been told yet.
const publisher =
  config.pauseAt === 'published'
    ? {
        name: nats.name,
        async publish(events, signal) {
          const outcomes = await nats.publish(events, signal);
          process.send({ point: 'published', eventIds: events.map((event) => event.eventId) });
          await new Promise(() => undefined);
          return outcomes;
        },
      }
    : nats;

const relay = createRelay({
  source: outbox.source,
  publisher,
  id: config.relayId,
  batchSize: config.batchSize ?? 100,
  leaseMs: config.leaseMs ?? 1_000,
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
    await nc.close();
    await pool.end();
    process.exit(0);
  }
});

relay.start();
process.send({ point: 'started' });
