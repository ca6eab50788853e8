import type { NatsConnection } from '@nats-io/nats-core';
import { createPool, type Process, processStorm, STORM } from '@oncely/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats, privateNatsServer } from './support/nats-server.js';
import { createPipeline, type Pipeline } from './support/pipeline.js';
import { assertBuilt, startProcess } from './support/processes.js';

const BUCKETS = 16;

describe(`storm: 3 relays and 2 consumers over ${STORM.events} events of ${STORM.aggregates} aggregates, random SIGKILLs, the broker SIGKILLed and restarted`, () => {
  const pool = createPool();
  let server: Awaited<ReturnType<typeof privateNatsServer>>;
  let nc: NatsConnection;
  let p: Pipeline;
  const live: Process[] = [];

  beforeAll(async () => {
    assertBuilt();
    server = await privateNatsServer();
    nc = await connectNats(server.url);
    p = await createPipeline(pool, nc, server.url, 'storm', BUCKETS);
  });
  afterAll(async () => {
    await Promise.all(live.splice(0).map((child) => child.kill()));
    await p?.close().catch(() => undefined);
    await nc?.close();
    await server?.stop();
    await pool.end();
  });

  it('ends with every event applied exactly once, each aggregate in sequence order', async () => {
    const relay = () => startProcess('relay-process.mjs', p.relayConfig({ batchSize: 50 }));
    const consumer = () => startProcess('consumer-process.mjs', p.consumerConfig({ ackWaitMs: 1_000 }));
    const storm = await processStorm({ pipeline: p, roles: [relay, relay, relay, consumer, consumer], live, restartBroker: () => server.restart() });
    console.info(`nats storm: ${storm.summary}`);
    expect(storm.problems).toEqual([]);
  }, STORM.testTimeoutMs);
});
