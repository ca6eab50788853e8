// A consumer service in its own OS process: one consumer per bucket queue (single active consumer),
// each applying events through the PostgreSQL inbox in one transaction with its business row, then
// acknowledging. It reports named points over IPC; the parent decides when it dies.
import { postgresInbox } from '@oncely/postgres';
import { rabbitConsumer } from '@oncely/rabbitmq';
import amqp from 'amqplib';
import pg from 'pg';

const config = JSON.parse(process.argv[2]);
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 6, application_name: config.name });
pool.on('error', () => undefined);
const connection = await amqp.connect(config.amqpUrl, { recovery: { initialDelay: 100, maxDelay: 1_000 } });
connection.on('error', () => undefined);
const inbox = postgresInbox({ db: pool, schema: config.schema });
const schema = `"${config.schema}"`;
let paused = false;

const apply = (tx, event) =>
  tx.query(`INSERT INTO ${schema}.applied (consumer, event_id, aggregate_id, aggregate_seq) VALUES ($1, $2, $3, $4)`, [
    config.name,
    event.eventId,
    event.aggregateId,
    event.aggregateSeq,
  ]);

const consumers = config.queues.map((queue) =>
  rabbitConsumer({
    connection,
    queue,
    consumer: config.name,
    prefetch: config.prefetch ?? 20,
    maxDeliver: config.maxDeliver ?? 1_000,
    idleMs: 200,
    backoff: { baseMs: 20, capMs: 500 },
    async handle(event) {
      const outcome = await inbox.run({ consumer: 'billing', eventId: event.eventId }, (tx) => apply(tx, event));
      if (outcome === 'duplicate') process.send({ point: 'duplicate', eventId: event.eventId });
      // The named point: the inbox transaction has committed, the message is not acknowledged yet.
      if (config.pauseAt === 'applied' && outcome === 'processed' && !paused) {
        paused = true;
        process.send({ point: 'applied', eventId: event.eventId });
        await new Promise(() => undefined);
      }
      return outcome;
    },
  }),
);

process.on('message', async (message) => {
  if (message === 'stop') {
    await Promise.all(consumers.map((consumer) => consumer.stop()));
    await connection.close().catch(() => undefined);
    await pool.end();
    process.exit(0);
  }
});

await Promise.all(consumers.map((consumer) => consumer.start()));
process.send({ point: 'started' });
