// A consumer service in its own OS process: reads Redis streams in a consumer group and applies each
// event through the Postgres inbox, in one transaction with its business writes, then acknowledges
// (the body is @oncely/test-support's).
import { postgresInbox } from '@oncely/postgres';
import { redisStreamConsumer } from '@oncely/redis';
import { consumerProcess } from '@oncely/test-support/processes';
import { Redis } from 'ioredis';

await consumerProcess({
  inbox: (pool, config) => postgresInbox({ db: pool, schema: config.schema }),
  /** The business effect, one statement: a row per applied event (in apply order) and the account balance. */
  apply: (tx, event, config) =>
    tx.query(
      `WITH applied AS (
         INSERT INTO "${config.schema}".applied (consumer, event_id, aggregate_id, aggregate_seq) VALUES ($1, $2, $3, $4)
       )
       INSERT INTO "${config.schema}".balances (account, balance) VALUES ($3, $5)
       ON CONFLICT (account) DO UPDATE SET balance = balances.balance + $5`,
      [config.name, event.eventId, event.aggregateId, event.aggregateSeq, event.payload.amount],
    ),
  async transport(config, handle) {
    const redis = new Redis(config.redisUrl);
    const consumer = redisStreamConsumer({
      client: redis,
      stream: config.streams,
      group: 'billing',
      consumer: config.name,
      batchSize: config.batchSize ?? 50,
      blockMs: 200,
      claimIdleMs: config.claimIdleMs ?? 30_000,
      claimIntervalMs: config.claimIntervalMs ?? 5_000,
      handle,
      // A stalled pipeline must say why in the test's output: every failure, with its retry delay.
      onEvent: (event) => {
        if (event.type === 'stream_handler_failed' || event.type === 'consumer_error') {
          console.error(`[${config.name}] ${event.type} attempt ${event.attempt ?? '-'}, retry in ${event.retryInMs} ms: ${event.error?.message ?? event.error}`);
        }
      },
    });
    return { consumers: [consumer], close: async () => redis.disconnect() };
  },
});
