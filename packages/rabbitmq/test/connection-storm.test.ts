import { postgresInbox, postgresOutbox } from '@oncely/postgres';
import { connectionStorm, createPool, DATABASE_URL, terminateBackends } from '@oncely/test-support';
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
    const storm = await connectionStorm({
      name,
      pipeline: p,
      durationMs: 6_000,
      drainMs: 15_000,
      aggregates: 20,
      killers: {
        'RabbitMQ connections': { everyMs: 300, kill: () => closeConnectionsNamed(name) },
        'PostgreSQL backends': { everyMs: 150, kill: terminateBackends(admin, name) },
      },
      source: postgresOutbox({ db: pool, schema: p.schema }).source,
      inbox: postgresInbox({ db: pool, schema: p.schema }),
      async open(handle) {
        const [relayConnection, consumerConnection] = await Promise.all([stormed(), stormed()]);
        const publisher = rabbitPublisher({ connection: relayConnection, queue: p.queue, buckets: BUCKETS });
        return {
          publisher,
          consumers: p.queues.map((queue) =>
            rabbitConsumer({ connection: consumerConnection, queue, consumer: name, idleMs: 100, maxDeliver: 1_000, backoff: { baseMs: 20, capMs: 200 }, handle }),
          ),
          async close() {
            await publisher.close();
            await Promise.all([relayConnection.close().catch(() => undefined), consumerConnection.close().catch(() => undefined)]);
          },
        };
      },
    });
    console.info(`rabbitmq connection storm: ${storm.summary}`);
    expect(storm.problems).toEqual([]);
    expect(storm.kills['RabbitMQ connections'], 'RabbitMQ connections closed').toBeGreaterThan(2);
    expect(storm.kills['PostgreSQL backends'], 'PostgreSQL backends terminated').toBeGreaterThan(5);
  }, 30_000);
});
