import type amqp from 'amqplib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPool, credit, until } from '@oncely/test-support';
import { createPipeline, type Pipeline } from './support/pipeline.js';
import { assertBuilt, killStarted, startProcess as start } from './support/processes.js';
import { AMQP_URL, connectRabbit, rabbitUp, suiteTitle } from './support/rabbit-server.js';

describe.skipIf(!rabbitUp)(suiteTitle('failure boundaries over RabbitMQ, with real processes SIGKILLed'), () => {
  const pool = createPool();
  let connection: amqp.ChannelModel;
  const pipelines: Pipeline[] = [];
  const pipeline = async (label: string) => {
    const created = await createPipeline(pool, connection, AMQP_URL, label, 1);
    pipelines.push(created);
    return created;
  };
  async function queued(queue: string) {
    const channel = await connection.createChannel();
    const { messageCount } = await channel.checkQueue(queue);
    await channel.close();
    return messageCount;
  }

  beforeAll(async () => {
    assertBuilt();
    connection = await connectRabbit();
  });
  afterEach(async () => {
    await killStarted();
    await Promise.all(pipelines.splice(0).map((created) => created.close()));
  });
  afterAll(async () => {
    await connection.close();
    await pool.end();
  });

  it('relay SIGKILLed after the broker confirm, before the mark: republished, skipped by the inbox, applied once', async () => {
    const p = await pipeline('relaykill');
    const [queue] = p.queues as [string];
    await p.enqueue([credit('acct-1')]);
    const doomed = start('relay-process.mjs', p.relayConfig({ pauseAt: 'published' }));
    const { eventIds } = await doomed.point('published');
    expect(await queued(queue)).toBe(1);
    expect(await p.unpublished()).toBe(1);
    await doomed.kill();

    start('relay-process.mjs', p.relayConfig());
    await until('the event is marked published by the next relay', async () => (await p.unpublished()) === 0);
    // RabbitMQ does not deduplicate: the queue holds the event twice.
    expect(await queued(queue)).toBe(2);
    const consumer = start('consumer-process.mjs', p.consumerConfig());
    expect((await consumer.point('duplicate')).eventId).toBe(eventIds![0]);
    expect((await p.applied()).map((row) => row.event_id)).toEqual(eventIds);
    await until('both copies are acknowledged', async () => (await queued(queue)) === 0);
  });

  it('consumer SIGKILLed after the inbox commit, before the ack: requeued by the broker, a duplicate, applied once', async () => {
    const p = await pipeline('consumerkill');
    await p.enqueue([credit('acct-1'), credit('acct-1')]);
    start('relay-process.mjs', p.relayConfig());
    await until('both events are published', async () => (await p.unpublished()) === 0);

    const doomed = start('consumer-process.mjs', p.consumerConfig({ pauseAt: 'applied' }));
    const { eventId } = await doomed.point('applied');
    expect((await p.applied()).map((row) => row.event_id)).toEqual([eventId]);
    await doomed.kill();

    const survivor = start('consumer-process.mjs', p.consumerConfig());
    expect((await survivor.point('duplicate')).eventId).toBe(eventId);
    await until('both events are applied', async () => (await p.applied()).length === 2);
    const applied = await p.applied();
    expect(applied.filter((row) => row.event_id === eventId)).toHaveLength(1);
    expect(applied.map((row) => row.aggregate_seq)).toEqual([1, 2]);
  });
});
