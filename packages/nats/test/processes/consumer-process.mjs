// A consumer service in its own OS process: one durable JetStream pull consumer per bucket subject,
// each applying events through the PostgreSQL inbox, then acknowledging (the body is @oncely/test-support's).
import { natsConsumer } from '@oncely/nats';
import { postgresInbox } from '@oncely/postgres';
import { consumerProcess } from '@oncely/test-support/processes';
import { connect } from '@nats-io/transport-node';

await consumerProcess({
  inbox: (pool, config) => postgresInbox({ db: pool, schema: config.schema }),
  async transport(config, handle) {
    const nc = await connect({ servers: config.natsUrl, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    const consumers = config.buckets.map((bucket) =>
      natsConsumer({
        connection: nc,
        stream: config.stream,
        durable: `billing-${bucket}`,
        filterSubject: `${config.subject}.${bucket}`,
        deadLetterSubject: `${config.subject}-dead`,
        ackWaitMs: config.ackWaitMs ?? 1_000,
        maxDeliver: config.maxDeliver ?? 1_000,
        backoff: { baseMs: 20, capMs: 500 },
        handle,
      }),
    );
    return { consumers, close: () => nc.close() };
  },
});
