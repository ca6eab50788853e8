// A consumer service in its own OS process: reads Redis streams in a consumer group and applies each
// event through the Postgres inbox, in one transaction with its business writes, then acknowledges.
// It reports named points over IPC; the parent decides when it dies.
import { postgresInbox } from '@oncely/postgres';
import { redisStreamConsumer } from '@oncely/redis';
import { Redis } from 'ioredis';
import pg from 'pg';

const config = JSON.parse(process.argv[2]);
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 4, application_name: config.consumer });
pool.on('error', () => undefined);
const redis = new Redis(config.redisUrl);
const inbox = postgresInbox({ db: pool, schema: config.schema });
const schema = `"${config.schema}"`;
let paused = false;

/** The business effect, one statement: a row per applied event (in apply order) and the account balance. */
const apply = (tx, event) =>
  tx.query(
    `WITH applied AS (
       INSERT INTO ${schema}.applied (consumer, event_id, aggregate_id, aggregate_seq) VALUES ($1, $2, $3, $4)
     )
     INSERT INTO ${schema}.balances (account, balance) VALUES ($3, $5)
     ON CONFLICT (account) DO UPDATE SET balance = balances.balance + $5`,
    [config.consumer, event.eventId, event.aggregateId, event.aggregateSeq, event.payload.amount],
  );

const consumer = redisStreamConsumer({
  client: redis,
  stream: config.streams,
  group: 'billing',
  consumer: config.consumer,
  batchSize: config.batchSize ?? 50,
  blockMs: 200,
  claimIdleMs: config.claimIdleMs ?? 30_000,
  claimIntervalMs: config.claimIntervalMs ?? 5_000,
  async handle(event) {
    const outcome = await inbox.run({ consumer: 'billing', eventId: event.eventId }, (tx) => apply(tx, event));
    if (outcome === 'duplicate') process.send({ point: 'duplicate', eventId: event.eventId });
    // The named point: the mutation has committed, the entry is not acknowledged yet.
    if (config.pauseAt === 'applied' && outcome === 'processed' && !paused) {
      paused = true;
      process.send({ point: 'applied', eventId: event.eventId });
      await new Promise(() => undefined);
    }
    return outcome;
  },
});

process.on('message', async (message) => {
  if (message === 'stop') {
    await consumer.stop();
    await pool.end();
    redis.disconnect();
    process.exit(0);
  }
});

await consumer.start();
process.send({ point: 'started' });
