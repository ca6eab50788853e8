import type { NatsConnection } from '@nats-io/nats-core';
import { createPool, exactlyOnceInOrder, type Process, processStorm } from '@oncely/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats, privateNatsServer } from './support/nats-server.js';
import { createPipeline, type Pipeline } from './support/pipeline.js';
import { assertBuilt, startProcess } from './support/processes.js';

/** Events of the storm; `ONCELY_STORM_EVENTS=10000` for the long run. */
const EVENTS = Number(process.env.ONCELY_STORM_EVENTS ?? 2_000);
/** The storm's time budget: the storm itself, then as long again for the last events (`ONCELY_STORM_BUDGET_MS` for the long run). */
const BUDGET_MS = Number(process.env.ONCELY_STORM_BUDGET_MS ?? 60_000);
const AGGREGATES = 200;
const BUCKETS = 16;
const PORT = 55301;

describe(`storm: 3 relays and 2 consumers over ${EVENTS} events of ${AGGREGATES} aggregates, random SIGKILLs, the broker SIGKILLed and restarted`, () => {
  const pool = createPool();
  let server: Awaited<ReturnType<typeof privateNatsServer>>;
  let nc: NatsConnection;
  let p: Pipeline;
  const live: Process[] = [];

  beforeAll(async () => {
    assertBuilt();
    server = await privateNatsServer(PORT);
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
    const storm = await processStorm({
      events: EVENTS,
      aggregates: AGGREGATES,
      budgetMs: BUDGET_MS,
      pipeline: p,
      roles: [relay, relay, relay, consumer, consumer],
      live,
      restartBroker: () => server.restart(),
    });
    expect(storm.brokerRestarts).toBe(1);
    expect(storm.kills).toBeGreaterThan(0);
    expect(exactlyOnceInOrder(storm.applied, EVENTS)).toEqual([]);
    console.info(`nats storm: ${EVENTS} events applied once in order in ${storm.elapsedMs} ms, ${storm.kills} SIGKILLs, ${storm.brokerRestarts} broker restart`);
  }, 2 * BUDGET_MS + 60_000);
});
