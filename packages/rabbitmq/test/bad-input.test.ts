import type amqp from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, credit, relayOnce } from '@oncely/test-support';
import { rabbitPublisher } from '../src/index.js';
import { createPipeline, type Pipeline } from './support/pipeline.js';
import { AMQP_URL, connectRabbit, rabbitUp, suiteTitle, uniqueName } from './support/rabbit-server.js';

describe.skipIf(!rabbitUp)(suiteTitle('bad input through a relay: the publisher fails the event, it stays in the PostgreSQL outbox (RabbitMQ)'), () => {
  const pool = createPool();
  let connection: amqp.ChannelModel;
  let p: Pipeline;
  beforeAll(async () => {
    connection = await connectRabbit();
    p = await createPipeline(pool, connection, AMQP_URL, 'badinput', 1);
  });
  afterAll(async () => {
    await p?.close();
    await connection?.close();
    await pool.end();
  });

  const runOnce = (queue: string) => relayOnce(p.outbox.source, rabbitPublisher({ connection, queue, buckets: 1, maxMessageBytes: 65_536 }));

  it.each([
    ['an event over maxMessageBytes', async () => ({ ...credit(uniqueName('big')), payload: { blob: 'x'.repeat(70_000) } }), 'invalid_event'],
    ['a header value that is not a string (a row written behind the outbox)', async () => credit(uniqueName('hdr')), 'invalid_event'],
    ['a queue that does not exist', async () => credit(uniqueName('noqueue')), 'invalid_state'],
  ] as const)('%s: typed error, rescheduled, not marked published', async (label, make, code) => {
    const event = await p.enqueueOne(await make());
    if (label.startsWith('a header')) await pool.query(`UPDATE ${p.outbox.table} SET headers = '{"traceparent": 42}' WHERE event_id = $1`, [event]);
    const queue = label.startsWith('a queue') ? uniqueName('elsewhere') : p.queues[0]!.replace(/\.0$/, '');
    const { batch, failures } = await runOnce(queue);
    expect(batch).toMatchObject({ claimed: 1, published: 0, rescheduled: 1 });
    expect(failures[0]).toMatchObject({ code });
    expect(await p.isPublished(event)).toBe(false);
    await pool.query(`DELETE FROM ${p.outbox.table} WHERE event_id = $1`, [event]);
  });
});
