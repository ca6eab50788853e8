import type amqp from 'amqplib';
import { createPool, type Process, processStorm, STORM } from '@oncely/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPipeline, type Pipeline } from './support/pipeline.js';
import { assertBuilt, startProcess } from './support/processes.js';
import { connectRabbit, privateRabbitNode } from './support/rabbit-server.js';

const BUCKETS = 16;

describe(`storm: 3 relays and 2 consumers over ${STORM.events} events of ${STORM.aggregates} aggregates, random SIGKILLs, the broker stopped and restarted`, () => {
  const pool = createPool();
  let server: Awaited<ReturnType<typeof privateRabbitNode>>;
  let connection: amqp.ChannelModel;
  let p: Pipeline;
  const live: Process[] = [];

  beforeAll(async () => {
    assertBuilt();
    server = await privateRabbitNode();
    connection = await connectRabbit(server.url);
    p = await createPipeline(pool, connection, server.url, 'storm', BUCKETS);
    await connection.close();
  }, 180_000);
  afterAll(async () => {
    await Promise.all(live.splice(0).map((child) => child.kill()));
    await server?.stop();
    await pool.query(`DROP SCHEMA IF EXISTS "${p?.schema}" CASCADE`).catch(() => undefined);
    await pool.end();
  });

  it('ends with every event applied exactly once, each aggregate in sequence order', async () => {
    const relay = () => startProcess('relay-process.mjs', p.relayConfig({ batchSize: 50 }));
    const consumer = () => startProcess('consumer-process.mjs', p.consumerConfig());
    const storm = await processStorm({ pipeline: p, roles: [relay, relay, relay, consumer, consumer], live, restartBroker: () => server.restart() });
    console.info(`rabbitmq storm: ${storm.summary}`);
    expect(storm.problems).toEqual([]);
  }, STORM.testTimeoutMs);
});
