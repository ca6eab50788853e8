// An outbox relay in its own OS process, importing the built packages as users do: PostgreSQL
// outbox → NATS JetStream (the body is @oncely/test-support's).
import { natsPublisher } from '@oncely/nats';
import { postgresOutbox } from '@oncely/postgres';
import { relayProcess } from '@oncely/test-support/processes';
import { connect } from '@nats-io/transport-node';

await relayProcess({
  outbox: (pool, config) => postgresOutbox({ db: pool, schema: config.schema }),
  async transport(config) {
    const nc = await connect({ servers: config.natsUrl, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    return {
      publisher: natsPublisher({ connection: nc, subject: config.subject, buckets: config.buckets, stream: config.stream, timeoutMs: 2_000 }),
      close: () => nc.close(),
    };
  },
});
