import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { OutboxEvent } from '@oncely/core/outbox';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventOf, ledger, recorder, until } from '@oncely/test-support';
import { ensureNatsStream, type NatsConsumer, type NatsConsumerOptions, natsConsumer, natsPublisher } from '../src/index.js';
import { connectNats, natsUp, suiteTitle, uniqueName } from './support/nats-server.js';

const signal = new AbortController().signal;

describe.skipIf(!natsUp)(suiteTitle('natsConsumer on the shared JetStream'), () => {
  let nc: NatsConnection;
  const stream = uniqueName('con');
  const dead = `${stream}.dead`;
  const running: NatsConsumer[] = [];
  let subjects = 0;
  const newSubject = () => `${stream}.s${++subjects}`;
  const publish = (subject: string, events: readonly OutboxEvent[]) => natsPublisher({ connection: nc, subject }).publish(events, signal);

  async function start(options: Omit<NatsConsumerOptions, 'connection' | 'stream' | 'deadLetterSubject' | 'durable'> & { durable?: string }) {
    const consumer = natsConsumer({
      connection: nc,
      stream,
      deadLetterSubject: dead,
      durable: options.durable ?? uniqueName('d'),
      backoff: { baseMs: 10, capMs: 50 },
      ...options,
    });
    running.push(consumer);
    await consumer.start();
    return consumer;
  }
  const info = async (durable: string) => (await jetstreamManager(nc)).consumers.info(stream, durable);

  beforeAll(async () => {
    nc = await connectNats();
    await ensureNatsStream(nc, { name: stream, subjects: [`${stream}.>`] });
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((consumer) => consumer.stop()));
  });
  afterAll(async () => {
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    await nc.close();
  });

  it('applies a subject in stream order and acknowledges each message only after its handler resolved', async () => {
    const subject = newSubject();
    const events = [eventOf('a', 1), eventOf('a', 2), eventOf('b', 1)];
    await publish(subject, events);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const { applied, handle } = ledger();
    const durable = uniqueName('d');
    await start({ durable, filterSubject: subject, handle: async (event) => {
        await gate;
        return handle(event);
      },
    });
    await until('the first message is delivered', async () => (await info(durable)).delivered.stream_seq >= 1);
    // The handler is held: the message stays unacknowledged, nothing later is delivered.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const held = await info(durable);
    open();
    expect([held.num_ack_pending, held.delivered.stream_seq - held.ack_floor.stream_seq]).toEqual([1, 1]);
    expect(applied).toEqual([]);
    await until('all are acknowledged', async () => {
      const state = await info(durable);
      return state.num_ack_pending === 0 && state.num_pending === 0 && applied.length === 3;
    });
    expect(applied.map((event) => event.eventId)).toEqual(events.map((event) => event.eventId));
  });

  it('a handler failure naks the message: it is redelivered before any later message and applied once', async () => {
    const subject = newSubject();
    const events = [eventOf('a', 1), eventOf('a', 2), eventOf('a', 3)];
    await publish(subject, events);
    let failures = 2;
    const { applied, handle } = ledger((event) => event.eventId === events[1]!.eventId && failures-- > 0);
    const { events: reported, onEvent } = recorder();
    await start({ filterSubject: subject, handle, onEvent });
    await until('all three applied', () => applied.length === 3);
    expect(applied.map((event) => event.aggregateSeq)).toEqual([1, 2, 3]);
    const failed = reported.filter((event) => event.type === 'message_handler_failed');
    expect(failed.map((event) => 'delivery' in event && event.delivery)).toEqual([1, 2]);
  });

  it('a redelivered event the inbox has seen is acknowledged as a duplicate and not applied again', async () => {
    const subject = newSubject();
    const event = eventOf('a', 1);
    await publish(subject, [event]);
    const { applied, inbox, handle } = ledger();
    inbox.add(event.eventId);
    const { events: reported, onEvent } = recorder();
    await start({ filterSubject: subject, handle, onEvent });
    await until('the duplicate is reported', () => reported.some((e) => e.type === 'message_duplicate'));
    expect(applied).toEqual([]);
  });

  it('after maxDeliver failed deliveries the message is parked on the dead-letter subject (stream-acked) and the next one goes on', async () => {
    const subject = newSubject();
    const [poison, next] = [eventOf('p', 1), eventOf('q', 1)];
    await publish(subject, [poison, next]);
    const { applied, handle } = ledger((event) => event.eventId === poison.eventId);
    const { events: reported, onEvent } = recorder();
    const durable = uniqueName('d');
    await start({ durable, filterSubject: subject, handle, onEvent, maxDeliver: 3 });
    await until('the next event is applied', () => applied.length === 1);
    expect(applied[0]?.eventId).toBe(next.eventId);
    expect(reported.filter((e) => e.type === 'message_handler_failed')).toHaveLength(2);
    expect(reported.find((e) => e.type === 'message_dead_lettered')).toMatchObject({ eventId: poison.eventId, delivery: 3 });
    const parked = await (await jetstreamManager(nc)).streams.getMessage(stream, { last_by_subj: dead });
    expect(parked?.json<{ eventId: string }>().eventId).toBe(poison.eventId);
    expect(parked?.header.get('Oncely-Error')).toContain('handler refused');
    expect((await info(durable)).num_ack_pending).toBe(0);
  });

  it('a message that is not an oncely event is parked, never handed to the handler', async () => {
    const subject = newSubject();
    await jetstream(nc).publish(subject, new TextEncoder().encode('not json'));
    const { applied, handle } = ledger();
    const { events: reported, onEvent } = recorder();
    await start({ filterSubject: subject, handle, onEvent });
    await until('malformed reported', () => reported.some((e) => e.type === 'message_malformed'));
    expect(reported.find((e) => e.type === 'message_malformed')).toMatchObject({ problem: 'not_json' });
    expect(applied).toEqual([]);
  });

  it('a handler answer outside the contract is a failure, retried, not an acknowledgement', async () => {
    const subject = newSubject();
    await publish(subject, [eventOf('a', 1)]);
    const { events: reported, onEvent } = recorder();
    let calls = 0;
    await start({ filterSubject: subject, onEvent, handle: async () => (++calls === 1 ? ('done' as never) : 'processed') });
    await until('processed on the second delivery', () => reported.some((e) => e.type === 'message_processed'));
    expect(reported.find((e) => e.type === 'message_handler_failed')).toMatchObject({ error: expect.objectContaining({ code: 'invalid_state' }) });
  });

  it('refuses bad options with invalid_option', () => {
    const base = { connection: nc, stream, durable: 'd', filterSubject: 'x', deadLetterSubject: dead, handle: async () => 'processed' as const };
    expect(() => natsConsumer({ ...base, durable: 'a.b' })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    expect(() => natsConsumer({ ...base, maxDeliver: 0 })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    expect(() => natsConsumer({ ...base, handle: undefined as never })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });
});
