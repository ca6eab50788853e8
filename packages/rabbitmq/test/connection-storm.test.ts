import { createRelay } from '@oncely/core/outbox';
import { postgresInbox, postgresOutbox } from '@oncely/postgres';
import { connectionStorm, createPool, DATABASE_URL, exactlyOnceInOrder, terminateBackends } from '@oncely/test-support';
import amqp from 'amqplib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rabbitConsumer, rabbitPublisher } from '../src/index.js';
import { createPipeline, type Pipeline } from './support/pipeline.js';
import { AMQP_URL, closeConnectionsNamed, connectRabbit, rabbitUp, suiteTitle, uniqueName } from './support/rabbit-server.js';

/**
 * Every connection this package's publisher and consumers hold, killed for a few seconds: the
 * relay's and the consumers' amqplib connections closed server-side (`rabbitmqctl eval` of only
 * this run's client-provided connection name), and their PostgreSQL backends terminated
 * (`pg_terminate_backend` of only this run's application_name). Nothing reaches
 * `uncaughtException` or `unhandledRejection`, and every event is applied once, in order, by the
 * end: the relay and the consumers keep draining through it.
 */

const BUCKETS = 4;

describe.skipIf(!rabbitUp)(suiteTitle('connection storm: RabbitMQ connections closed by the broker and PostgreSQL backends terminated, in process'), () => {
  const admin = createPool();
  const name = uniqueName('connstorm');
  const pool = new pg.Pool({ connectionString: DATABASE_URL, application_name: name, max: 8 });
  pool.on('error', () => undefined);
  let connection: amqp.ChannelModel;
  let p: Pipeline;
  beforeAll(async () => {
    connection = await connectRabbit();
    p = await createPipeline(admin, connection, AMQP_URL, 'connstorm', BUCKETS);
  });
  afterAll(async () => {
    await p?.close();
    await connection?.close();
    await Promise.all([pool.end(), admin.end()]);
  });

  it('no error goes unheard, every event is applied exactly once in aggregate order, and the pipeline drains after the storm', async () => {
    // Both reconnect by themselves; their error listeners are the application's, as a service has them.
    const stormed = () =>
      amqp.connect(AMQP_URL, { clientProperties: { connection_name: name }, recovery: { initialDelay: 50, maxDelay: 500 } }).then((opened) => {
        opened.on('error', () => undefined);
        return opened;
      });
    const inbox = postgresInbox({ db: pool, schema: p.schema });
    const storm = await connectionStorm({
      pipeline: p,
      durationMs: 6_000,
      drainMs: 15_000,
      aggregates: 20,
      killers: {
        'RabbitMQ connections': { everyMs: 300, kill: () => closeConnectionsNamed(name) },
        'PostgreSQL backends': { everyMs: 150, kill: terminateBackends(admin, name) },
      },
      async start() {
        const [relayConnection, consumerConnection] = await Promise.all([stormed(), stormed()]);
        const publisher = rabbitPublisher({ connection: relayConnection, queue: p.queue, buckets: BUCKETS });
        const relay = createRelay({
          source: postgresOutbox({ db: pool, schema: p.schema }).source,
          publisher,
          id: name,
          batchSize: 20,
          leaseMs: 1_000,
          publishTimeoutMs: 500,
          pollIntervalMs: 50,
          maxAttempts: 1_000,
          backoff: { baseMs: 20, capMs: 200 },
          errorBackoff: { baseMs: 20, capMs: 200 },
          statsIntervalMs: 0,
          purge: false,
        });
        const consumers = p.queues.map((queue) =>
          rabbitConsumer({
            connection: consumerConnection,
            queue,
            consumer: name,
            idleMs: 100,
            maxDeliver: 1_000,
            backoff: { baseMs: 20, capMs: 200 },
            handle: (event) =>
              inbox.run({ consumer: 'billing', eventId: event.eventId }, (tx) =>
                tx.query(`INSERT INTO "${p.schema}".applied (consumer, event_id, aggregate_id, aggregate_seq) VALUES ($1, $2, $3, $4)`, [
                  name,
                  event.eventId,
                  event.aggregateId,
                  event.aggregateSeq,
                ]),
              ),
          }),
        );
        relay.start();
        await Promise.all(consumers.map((consumer) => consumer.start()));
        return async () => {
          await Promise.all([relay.stop(), ...consumers.map((consumer) => consumer.stop())]);
          await publisher.close();
          await Promise.all([relayConnection.close().catch(() => undefined), consumerConnection.close().catch(() => undefined)]);
        };
      },
    });
    console.info(`rabbitmq connection storm: ${storm.summary}`);
    expect(storm.unheard.map(String), 'uncaught exceptions and unhandled rejections').toEqual([]);
    expect(storm.listenerWarnings.map(String), 'listeners piling up').toEqual([]);
    expect(storm.kills['RabbitMQ connections'], 'RabbitMQ connections closed').toBeGreaterThan(2);
    expect(storm.kills['PostgreSQL backends'], 'PostgreSQL backends terminated').toBeGreaterThan(5);
    expect(await p.unpublished(), 'the relay drained the outbox').toBe(0);
    expect(exactlyOnceInOrder(storm.applied, storm.events)).toEqual([]);
  }, 30_000);
});
