import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPool, credit, until } from '@oncely/test-support';
import { connectNats, NATS_URL, natsUp, suiteTitle } from './support/nats-server.js';
import { createPipeline, type Pipeline } from './support/pipeline.js';
import { assertBuilt, killStarted, startProcess as start } from './support/processes.js';

describe.skipIf(!natsUp)(suiteTitle('failure boundaries over JetStream, with real processes SIGKILLed'), () => {
  const pool = createPool();
  let nc: NatsConnection;
  const pipelines: Pipeline[] = [];
  const pipeline = async (label: string) => {
    const created = await createPipeline(pool, nc, NATS_URL, label, 1);
    pipelines.push(created);
    return created;
  };

  beforeAll(async () => {
    assertBuilt();
    nc = await connectNats();
  });
  afterEach(async () => {
    await killStarted();
    await Promise.all(pipelines.splice(0).map((created) => created.close()));
  });
  afterAll(async () => {
    await nc.close();
    await pool.end();
  });

  it('relay SIGKILLed after the stream ack, before the mark: republished, dropped by the duplicate window, applied once', async () => {
    const p = await pipeline('relaykill');
    await p.enqueue([credit('acct-1')]);
    const doomed = start('relay-process.mjs', p.relayConfig({ pauseAt: 'published' }));
    const { eventIds } = await doomed.point('published');
    expect(await p.streamMessages()).toBe(1);
    expect(await p.unpublished()).toBe(1);
    await doomed.kill();

    start('relay-process.mjs', p.relayConfig());
    await until('the event is marked published by the next relay', async () => (await p.unpublished()) === 0);
    // The republish carried the same Nats-Msg-Id: the stream still holds one message.
    expect(await p.streamMessages()).toBe(1);
    start('consumer-process.mjs', p.consumerConfig());
    await until('the event is applied', async () => (await p.applied()).length === 1);
    expect((await p.applied()).map((row) => row.event_id)).toEqual(eventIds);
  });

  it('consumer SIGKILLed after the inbox commit, before the ack: redelivered after AckWait, a duplicate, applied once', async () => {
    const p = await pipeline('consumerkill');
    await p.enqueue([credit('acct-1'), credit('acct-1')]);
    start('relay-process.mjs', p.relayConfig());
    await until('both events are published', async () => (await p.unpublished()) === 0);

    const doomed = start('consumer-process.mjs', p.consumerConfig({ pauseAt: 'applied', ackWaitMs: 1_000 }));
    const { eventId } = await doomed.point('applied');
    expect((await p.applied()).map((row) => row.event_id)).toEqual([eventId]);
    await doomed.kill();

    const survivor = start('consumer-process.mjs', p.consumerConfig({ ackWaitMs: 1_000 }));
    expect((await survivor.point('duplicate')).eventId).toBe(eventId);
    await until('both events are applied', async () => (await p.applied()).length === 2);
    const applied = await p.applied();
    expect(applied.filter((row) => row.event_id === eventId)).toHaveLength(1);
    expect(applied.map((row) => row.aggregate_seq)).toEqual([1, 2]);
  });
});
