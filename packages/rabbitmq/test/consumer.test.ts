import type { OutboxEvent } from '@oncely/core/outbox';
import type amqp from 'amqplib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventOf, ledger, recorder, until } from '@oncely/test-support';
import { ensureRabbitQueues, type RabbitConsumer, type RabbitConsumerOptions, rabbitConsumer, rabbitPublisher } from '../src/index.js';
import { connectRabbit, deleteQueues, drain, rabbitUp, suiteTitle, uniqueName } from './support/rabbit-server.js';

const signal = new AbortController().signal;

describe.skipIf(!rabbitUp)(suiteTitle('rabbitConsumer on the shared RabbitMQ'), () => {
  let connection: amqp.ChannelModel;
  const declared: string[] = [];
  const running: RabbitConsumer[] = [];

  /** A fresh quorum queue and its dead-letter queue. */
  async function newQueue(deliveryLimit?: number) {
    const queue = uniqueName('con');
    const dead = `${queue}.dead`;
    await ensureRabbitQueues(connection, { queue, deadLetterQueue: dead, ...(deliveryLimit ? { deliveryLimit } : {}) });
    declared.push(queue, dead);
    return { queue, dead };
  }
  const publish = async (queue: string, events: readonly OutboxEvent[]) => {
    const publisher = rabbitPublisher({ connection, queue });
    await publisher.publish(events, signal);
    await publisher.close();
  };
  async function start(options: Omit<RabbitConsumerOptions, 'connection' | 'consumer'> & { consumer?: string }) {
    const consumer = rabbitConsumer({ connection, consumer: 'c1', backoff: { baseMs: 10, capMs: 50 }, idleMs: 100, ...options });
    running.push(consumer);
    await consumer.start();
    return consumer;
  }
  async function counts(queue: string) {
    const channel = await connection.createChannel();
    const { messageCount } = await channel.checkQueue(queue);
    await channel.close();
    return messageCount;
  }

  beforeAll(async () => {
    connection = await connectRabbit();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((consumer) => consumer.stop()));
  });
  afterAll(async () => {
    await deleteQueues(connection, declared);
    await connection.close();
  });

  it('applies the queue in order and acknowledges each message only after its handler resolved', async () => {
    const { queue } = await newQueue();
    const events = [eventOf('a', 1), eventOf('a', 2), eventOf('b', 1)];
    await publish(queue, events);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const { applied, handle } = ledger();
    const consumer = await start({
      queue,
      handle: async (event) => {
        await gate;
        return handle(event);
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(applied).toEqual([]);
    // Stopped while the handler waits: nothing was acknowledged, the broker has all three again.
    const stopping = consumer.stop();
    open();
    await stopping;
    const again = ledger();
    await start({ queue, handle: again.handle });
    await until('all three applied by the next consumer', () => again.applied.length >= 3 - applied.length);
    expect([...applied, ...again.applied].map((event) => event.eventId).slice(-3)).toEqual(events.map((event) => event.eventId));
  });

  it('a handler failure is retried before any later message, and the event is applied once', async () => {
    const { queue } = await newQueue();
    const events = [eventOf('a', 1), eventOf('a', 2), eventOf('a', 3)];
    await publish(queue, events);
    let failures = 2;
    const { applied, handle } = ledger((event) => event.eventId === events[1]!.eventId && failures-- > 0);
    const { events: reported, onEvent } = recorder();
    await start({ queue, handle, onEvent });
    await until('all three applied', () => applied.length === 3);
    expect(applied.map((event) => event.aggregateSeq)).toEqual([1, 2, 3]);
    expect(reported.filter((event) => event.type === 'message_handler_failed').map((event) => 'delivery' in event && event.delivery)).toEqual([1, 2]);
    await until('the queue is empty', async () => (await counts(queue)) === 0);
  });

  it('a redelivered event the inbox has seen is acknowledged as a duplicate and not applied again', async () => {
    const { queue } = await newQueue();
    const event = eventOf('a', 1);
    await publish(queue, [event]);
    const { applied, inbox, handle } = ledger();
    inbox.add(event.eventId);
    const { events: reported, onEvent } = recorder();
    await start({ queue, handle, onEvent });
    await until('the duplicate is reported', () => reported.some((e) => e.type === 'message_duplicate'));
    expect(applied).toEqual([]);
  });

  it('after maxDeliver failed deliveries the message goes to the dead-letter queue and the next one is applied', async () => {
    const { queue, dead } = await newQueue();
    const [poison, next] = [eventOf('p', 1), eventOf('q', 1)];
    await publish(queue, [poison, next]);
    const { applied, handle } = ledger((event) => event.eventId === poison.eventId);
    const { events: reported, onEvent } = recorder();
    await start({ queue, handle, onEvent, maxDeliver: 3 });
    await until('the next event is applied', () => applied.length === 1);
    expect(applied[0]?.eventId).toBe(next.eventId);
    expect(reported.find((e) => e.type === 'message_dead_lettered')).toMatchObject({ eventId: poison.eventId, delivery: 3 });
    const parked = await drain(connection, dead);
    expect(parked.map((message) => message.properties.messageId)).toEqual([poison.eventId]);
  });

  it('a message that is not an oncely event is dead-lettered, never handed to the handler', async () => {
    const { queue, dead } = await newQueue();
    const channel = await connection.createChannel();
    channel.sendToQueue(queue, Buffer.from('{"not":"an event"}'), { persistent: true });
    await channel.close();
    const { applied, handle } = ledger();
    const { events: reported, onEvent } = recorder();
    await start({ queue, handle, onEvent });
    await until('malformed reported', () => reported.some((e) => e.type === 'message_malformed'));
    expect(reported.find((e) => e.type === 'message_malformed')).toMatchObject({ problem: 'missing_field' });
    expect(applied).toEqual([]);
    expect(await drain(connection, dead)).toHaveLength(1);
  });

  it('a missing queue makes start() reject with a StorageError; bad options are invalid_option', async () => {
    const consumer = rabbitConsumer({ connection, queue: uniqueName('missing'), consumer: 'c1', handle: async () => 'processed' });
    await expect(consumer.start()).rejects.toMatchObject({ code: 'storage_error' });
    const base = { connection, queue: 'q', consumer: 'c', handle: async () => 'processed' as const };
    expect(() => rabbitConsumer({ ...base, prefetch: 0 })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    expect(() => rabbitConsumer({ ...base, queue: '' })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });
});
