import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './support/fixtures.js';
import { connectNats, privateNatsServer } from './support/nats-server.js';
import { createPipeline, createPool, credit, exactlyOnceInOrder, type Pipeline } from './support/pipeline.js';
import { assertBuilt, type Process, startProcess } from './support/process-control.js';

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
    // Enqueued up front and during the storm, each aggregate's events in sequence.
    const events = Array.from({ length: EVENTS }, (_, i) => credit(`acct-${i % AGGREGATES}`));
    const half = Math.floor(EVENTS / 2);
    for (let i = 0; i < half; i += 500) await p.enqueue(events.slice(i, Math.min(i + 500, half)));

    const relay = () => startProcess('relay-process.mjs', p.relayConfig({ batchSize: 50 }));
    const consumer = () => startProcess('consumer-process.mjs', p.consumerConfig({ ackWaitMs: 1_000 }));
    const roles: (() => Process)[] = [relay, relay, relay, consumer, consumer];
    live.push(...roles.map((role) => role()));

    let kills = 0;
    let brokerRestarts = 0;
    let enqueued = half;
    const started = Date.now();
    const storm = (async () => {
      while (Date.now() - started < BUDGET_MS) {
        const applied = (await p.applied()).length;
        if (applied >= EVENTS) return;
        if (enqueued < EVENTS) {
          await p.enqueue(events.slice(enqueued, Math.min(enqueued + 500, EVENTS)));
          enqueued = Math.min(enqueued + 500, EVENTS);
        }
        if (brokerRestarts === 0 && applied >= EVENTS / 3) {
          await server.restart();
          brokerRestarts += 1;
        } else if (kills < 12 && applied < EVENTS * 0.9) {
          const victim = Math.floor(Math.random() * live.length);
          await live[victim]!.kill();
          live[victim] = roles[victim]!();
          kills += 1;
        }
        await new Promise((resolve) => setTimeout(resolve, 700));
      }
    })();
    await storm;
    await until('every event applied', async () => (await p.applied()).length >= EVENTS && (await p.unpublished()) === 0, BUDGET_MS);
    expect(brokerRestarts).toBe(1);
    expect(kills).toBeGreaterThan(0);
    const applied = await p.applied();
    expect(exactlyOnceInOrder(applied, EVENTS)).toEqual([]);
    console.info(`nats storm: ${EVENTS} events applied once in order in ${Date.now() - started} ms, ${kills} SIGKILLs, ${brokerRestarts} broker restart`);
  }, 2 * BUDGET_MS + 60_000);
});
