import { isOncelyError } from '@oncely/core';
import { partitionOf } from '@oncely/core/adapter';
import type amqp from 'amqplib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventOf } from '@oncely/test-support';
import { ensureRabbitQueues, type RabbitPublisher, rabbitPublisher } from '../src/index.js';
import { connectRabbit, deleteQueues, drain, rabbitUp, suiteTitle, uniqueName } from './support/rabbit-server.js';

const signal = new AbortController().signal;

describe.skipIf(!rabbitUp)(suiteTitle('rabbitPublisher on the shared RabbitMQ'), () => {
  let connection: amqp.ChannelModel;
  const queue = uniqueName('pub');
  const dead = `${queue}.dead`;
  let queues: string[] = [];
  const publishers: RabbitPublisher[] = [];
  const publisher = (options: Partial<Parameters<typeof rabbitPublisher>[0]> = {}) => {
    const created = rabbitPublisher({ connection, queue, buckets: 3, ...options });
    publishers.push(created);
    return created;
  };

  beforeAll(async () => {
    connection = await connectRabbit();
    queues = await ensureRabbitQueues(connection, { queue, buckets: 3, deadLetterQueue: dead });
  });
  afterAll(async () => {
    for (const created of publishers) await created.close();
    await deleteQueues(connection, [...queues, dead]);
    await connection.close();
  });

  it('listens to the batch signal once, however many events the batch holds; an abort fails every event not yet confirmed', async () => {
    const events = Array.from({ length: 20 }, (_, i) => eventOf(`many-${i}`, 1));
    const quiet = new AbortController();
    const listened = vi.spyOn(quiet.signal, 'addEventListener');
    expect(await publisher().publish(events, quiet.signal)).toEqual(events.map(() => ({ kind: 'published' })));
    // One per event passed Node's 10 listeners per signal: a MaxListenersExceededWarning per batch.
    expect(listened.mock.calls.filter(([type]) => type === 'abort')).toHaveLength(1);
    expect((await Promise.all(queues.map((name) => drain(connection, name)))).flat()).toHaveLength(events.length);

    const stopped = new AbortController();
    const outcomes = publisher().publish(events.map((event) => eventOf(event.aggregateId, 2)), stopped.signal);
    const reason = new Error('the relay gave up on this batch');
    stopped.abort(reason);
    expect(await outcomes).toEqual(events.map(() => ({ kind: 'failed', error: reason })));
    // Given up on before it was sent: nothing reached a queue.
    expect((await Promise.all(queues.map((name) => drain(connection, name)))).flat()).toEqual([]);
  });

  it('reports published on the broker confirm: a persistent message with messageId = eventId, headers carried, in its aggregate bucket queue', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const events = ['a', 'b', 'c', 'd', 'e'].flatMap((id) => [eventOf(id, 1, { headers: { traceparent } }), eventOf(id, 2)]);
    expect(await publisher().publish(events, signal)).toEqual(events.map(() => ({ kind: 'published' })));
    const got = (await Promise.all(queues.map(async (name) => (await drain(connection, name)).map((message) => ({ name, message }))))).flat();
    expect(got).toHaveLength(events.length);
    for (const { name, message } of got) {
      const body = JSON.parse(message.content.toString()) as { eventId: string; aggregateId: string };
      expect(name).toBe(`${queue}.${partitionOf(body.aggregateId, 3)}`);
      expect(message.properties.messageId).toBe(body.eventId);
      expect(message.properties.deliveryMode).toBe(2);
    }
    const first = got.find(({ message }) => message.properties.messageId === events[0]!.eventId);
    expect(first?.message.properties.headers?.traceparent).toBe(traceparent);
    // Each aggregate's events sit in one queue in sequence order.
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      const seqs = got
        .map(({ message }) => JSON.parse(message.content.toString()) as { aggregateId: string; aggregateSeq: number })
        .filter((body) => body.aggregateId === id)
        .map((body) => body.aggregateSeq);
      expect(seqs).toEqual([1, 2]);
    }
  });

  describe('bad input: a typed error, the event not published', () => {
    it('an event over maxMessageBytes is refused with invalid_event before it is sent', async () => {
      const [outcome] = await publisher({ maxMessageBytes: 1_024 }).publish([eventOf('big', 1, { payload: { blob: 'x'.repeat(2_000) } })], signal);
      expect(outcome?.kind === 'failed' && isOncelyError(outcome.error, 'invalid_event')).toBe(true);
      expect((await Promise.all(queues.map((name) => drain(connection, name)))).flat()).toEqual([]);
    });

    it('a header value that is not a string is refused with invalid_event', async () => {
      const bad = eventOf('bad', 1, { headers: { traceparent: { nested: true } } as unknown as Record<string, string> });
      const [outcome] = await publisher().publish([bad], signal);
      expect(outcome?.kind === 'failed' && isOncelyError(outcome.error, 'invalid_event')).toBe(true);
    });

    it('an event for a queue that does not exist comes back unroutable and fails; the channel stays usable', async () => {
      const lost = rabbitPublisher({ connection, queue: uniqueName('missing') });
      publishers.push(lost);
      const [outcome] = await lost.publish([eventOf('m', 1)], signal);
      expect(outcome?.kind).toBe('failed');
      expect(String(outcome?.kind === 'failed' && (outcome.error as Error).message)).toMatch(/no queue/);
      const [next] = await lost.publish([eventOf('m', 1)], signal);
      expect(next?.kind).toBe('failed');
    });
  });
});
