import type { OutboxEvent } from '@oncely/core/outbox';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type RedisStreamConsumer, type RedisStreamConsumerOptions, redisStreamConsumer, redisStreamPublisher } from '../../src/index.js';
import { cleanUp, connect, eventOf, ledger, pendingCount, REDIS_URL, recorder, streamPrefix, until } from './stream-fixtures.js';

const client = connect();
const prefix = streamPrefix();
const signal = new AbortController().signal;
const running: RedisStreamConsumer[] = [];
let streams = 0;
const newStream = () => `${prefix}s${++streams}`;

const publish = (stream: string, events: readonly OutboxEvent[]) => redisStreamPublisher({ client, stream }).publish(events, signal);

async function startConsumer(options: Omit<RedisStreamConsumerOptions, 'client'>) {
  const consumer = redisStreamConsumer({ client, blockMs: 200, backoff: { baseMs: 10, capMs: 50 }, ...options });
  running.push(consumer);
  await consumer.start();
  return consumer;
}

/** Delivers entries to `consumer` as XREADGROUP does, then forgets them: a consumer that died mid-batch. */
async function deliverAndDie(stream: string, group: string, consumer: string, count: number) {
  await client.xgroup('CREATE', stream, group, '0', 'MKSTREAM').catch(() => undefined);
  await client.xreadgroup('GROUP', group, consumer, 'COUNT', count, 'STREAMS', stream, '>');
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((consumer) => consumer.stop()));
});

afterAll(async () => {
  await cleanUp(client, prefix);
  await client.quit();
});

describe('redisStreamConsumer', () => {
  it("reads with ioredis 5's reply shapes even on a client with ioredis 6's replyMapping: 'resp3'", async () => {
    // ioredis 5 ignores the option; on ioredis 6 it would make XREADGROUP answer objects.
    const resp3 = new Redis(REDIS_URL, { replyMapping: 'resp3' } as RedisOptions);
    const stream = newStream();
    const events = [eventOf('a', 1), eventOf('a', 2)];
    await publish(stream, events);
    const { applied, handle } = ledger();
    const consumer = redisStreamConsumer({ client: resp3, stream, group: 'billing', consumer: 'c1', handle, blockMs: 200 });
    await consumer.start();
    try {
      await until(async () => (await pendingCount(client, stream, 'billing')) === 0 && applied.length === 2);
      expect(applied.map((event) => event.eventId)).toEqual(events.map((event) => event.eventId));
    } finally {
      await consumer.stop();
      await resp3.quit();
    }
  });

  it('never waits while entries are there: a backlog of several reads and an entry appended during a blocked read are applied at once', async () => {
    const stream = newStream();
    const backlog = Array.from({ length: 6 }, (_, i) => eventOf('a', i + 1));
    await publish(stream, backlog);
    const { applied, handle } = ledger();
    // A read blocks for 10 minutes: far past `until`'s 15 s, so any wait for blockMs fails the test.
    await startConsumer({ stream, group: 'billing', consumer: 'c1', handle, batchSize: 2, blockMs: 600_000 });
    await until(() => applied.length === 6);
    const late = [eventOf('a', 7), eventOf('b', 1)];
    await publish(stream, late);
    await until(() => applied.length === 8);
    expect(applied.map((event) => event.eventId)).toEqual([...backlog, ...late].map((event) => event.eventId));
  });

  it('applies every entry in stream order and acknowledges each one only after its handler resolved', async () => {
    const stream = newStream();
    const events = [eventOf('a', 1), eventOf('a', 2), eventOf('b', 1)];
    await publish(stream, events);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const { applied, handle } = ledger();
    await startConsumer({
      stream,
      group: 'billing',
      consumer: 'c1',
      handle: async (event, delivery) => {
        await gate;
        return handle(event, delivery);
      },
    });
    await until(async () => (await pendingCount(client, stream, 'billing')) === 3);
    expect(applied).toEqual([]);
    open();
    await until(async () => (await pendingCount(client, stream, 'billing')) === 0);
    expect(applied.map((event) => event.eventId)).toEqual(events.map((event) => event.eventId));
  });

  it('a redelivered event is acknowledged as a duplicate and not applied again', async () => {
    const stream = newStream();
    const event = eventOf('a', 1);
    await publish(stream, [event, event]);
    const { applied, handle } = ledger();
    const { events, onEvent } = recorder();
    await startConsumer({ stream, group: 'billing', consumer: 'c1', handle, onEvent });
    await until(() => events.some((e) => e.type === 'stream_duplicate'));
    expect(applied).toHaveLength(1);
    expect(await pendingCount(client, stream, 'billing')).toBe(0);
    expect(events.filter((e) => e.type === 'stream_duplicate')).toEqual([
      expect.objectContaining({ group: 'billing', consumer: 'c1', eventId: event.eventId }),
    ]);
  });

  it('a failing handler holds back the later entries of its stream, not of other streams, and is retried', async () => {
    const slow = newStream();
    const fast = newStream();
    const [first, second] = [eventOf('a', 1), eventOf('a', 2)];
    const other = eventOf('z', 1);
    await publish(slow, [first, second]);
    await publish(fast, [other]);
    let refusals = 2;
    const { applied, handle } = ledger((event) => event.eventId === first.eventId && refusals-- > 0);
    const { events, onEvent } = recorder();
    await startConsumer({ stream: [slow, fast], group: 'g', consumer: 'c1', handle, onEvent });
    await until(() => applied.length === 3);
    const ids = applied.map((event) => event.eventId);
    expect(ids.indexOf(first.eventId)).toBeLessThan(ids.indexOf(second.eventId));
    expect(ids.indexOf(other.eventId)).toBeLessThan(ids.indexOf(first.eventId));
    const failures = events.flatMap((e) => (e.type === 'stream_handler_failed' ? [[e.eventId, e.attempt]] : []));
    expect(failures).toEqual([
      [first.eventId, 1],
      [first.eventId, 2],
    ]);
    expect(await pendingCount(client, slow, 'g')).toBe(0);
  });

  it('a restarted consumer finishes its own pending entries first, in order', async () => {
    const stream = newStream();
    const events = [1, 2, 3, 4, 5].map((seq) => eventOf('a', seq));
    await publish(stream, events.slice(0, 3));
    await deliverAndDie(stream, 'g', 'worker-1', 3);
    await publish(stream, events.slice(3));
    const { applied, handle } = ledger();
    await startConsumer({ stream, group: 'g', consumer: 'worker-1', handle, claimIdleMs: 600_000 });
    await until(() => applied.length === 5);
    expect(applied.map((event) => event.aggregateSeq)).toEqual([1, 2, 3, 4, 5]);
    expect(await pendingCount(client, stream, 'g')).toBe(0);
  });

  it('takes over with XAUTOCLAIM what a dead consumer left pending longer than claimIdleMs', async () => {
    const stream = newStream();
    const events = [eventOf('a', 1), eventOf('b', 1), eventOf('c', 1)];
    await publish(stream, events);
    await deliverAndDie(stream, 'g', 'dead', 3);
    const { applied, handle } = ledger();
    const { events: seen, onEvent } = recorder();
    await startConsumer({ stream, group: 'g', consumer: 'survivor', handle, claimIdleMs: 300, claimIntervalMs: 100, onEvent });
    await until(() => applied.length === 3);
    expect(new Set(applied.map((event) => event.eventId))).toEqual(new Set(events.map((event) => event.eventId)));
    expect(seen.filter((e) => e.type === 'stream_reclaimed').reduce((sum, e) => sum + (e.type === 'stream_reclaimed' ? e.count : 0), 0)).toBe(3);
    const [, , , owners] = (await client.xpending(stream, 'g')) as [number, string | null, string | null, [string, string][] | null];
    expect(owners).toBeNull();
  });

  it('acknowledges, reports and skips entries that are not oncely events', async () => {
    const stream = newStream();
    await client.xadd(stream, '*', 'foo', 'bar');
    const event = eventOf('a', 1);
    await publish(stream, [event]);
    const { applied, handle } = ledger();
    const { events, onEvent } = recorder();
    await startConsumer({ stream, group: 'g', consumer: 'c1', handle, onEvent });
    await until(() => applied.length === 1);
    expect(events.find((e) => e.type === 'stream_malformed')).toMatchObject({ problem: 'missing_field', fields: { foo: 'bar' } });
    expect(await pendingCount(client, stream, 'g')).toBe(0);
  });

  it('a handler answering something else than processed or duplicate counts as a failure', async () => {
    const stream = newStream();
    await publish(stream, [eventOf('a', 1)]);
    const { events, onEvent } = recorder();
    await startConsumer({ stream, group: 'g', consumer: 'c1', handle: async () => 'done' as never, onEvent });
    await until(() => events.some((e) => e.type === 'stream_handler_failed'));
    expect(await pendingCount(client, stream, 'g')).toBe(1);
  });

  it('stop() lets the handler in flight finish and acknowledges its entry', async () => {
    const stream = newStream();
    await publish(stream, [eventOf('a', 1)]);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let entered = false;
    const { applied, handle } = ledger();
    const consumer = await startConsumer({
      stream,
      group: 'g',
      consumer: 'c1',
      handle: async (event, delivery) => {
        entered = true;
        await gate;
        return handle(event, delivery);
      },
    });
    await until(() => entered);
    const stopped = consumer.stop();
    expect(consumer.status).toBe('stopping');
    open();
    await stopped;
    expect(consumer.status).toBe('stopped');
    expect(applied).toHaveLength(1);
    expect(await pendingCount(client, stream, 'g')).toBe(0);
  });

  it('stop() ends a blocked read, and entries added later wait for the next consumer', async () => {
    const stream = newStream();
    const { events, onEvent } = recorder();
    const first = await startConsumer({ stream, group: 'g', consumer: 'c1', handle: ledger().handle, blockMs: 600_000, onEvent });
    await until(() => events.some((e) => e.type === 'consumer_started'));
    await first.stop();
    expect(first.status).toBe('stopped');
    const event = eventOf('a', 1);
    await publish(stream, [event]);
    const { applied, handle } = ledger();
    await startConsumer({ stream, group: 'g', consumer: 'c1', handle });
    await until(() => applied.length === 1);
    expect(applied[0]!.eventId).toBe(event.eventId);
  });

  it('start() rejects with a StorageError when the stream key holds something else', async () => {
    const stream = newStream();
    await client.set(stream, 'not a stream');
    const consumer = redisStreamConsumer({ client, stream, group: 'g', consumer: 'c1', handle: ledger().handle });
    await expect(consumer.start()).rejects.toMatchObject({ code: 'storage_error' });
    expect(consumer.status).toBe('stopped');
  });

  it('handleBatch gets each stream share of a read at once; the applied prefix is acknowledged, a failed entry and the rest wait and are retried', async () => {
    const stream = newStream();
    const events = [eventOf('a', 1), eventOf('a', 2), eventOf('a', 3), eventOf('a', 4)];
    await publish(stream, events);
    const calls: string[][] = [];
    const applied = new Set<string>();
    let poisoned = true;
    await startConsumer({
      stream,
      group: 'billing',
      consumer: 'c1',
      batchSize: 10,
      handleBatch: async (batch) => {
        calls.push(batch.map((event) => event.eventId));
        const failedAt = poisoned ? batch.findIndex((event) => event.eventId === events[2]!.eventId) : -1;
        const ok = failedAt < 0 ? batch : batch.slice(0, failedAt);
        for (const event of ok) applied.add(event.eventId);
        if (failedAt >= 0) {
          poisoned = false;
          return { outcomes: ok.map(() => 'processed' as const), failed: { index: failedAt, error: new Error('poison') } };
        }
        return { outcomes: ok.map(() => 'processed' as const) };
      },
    });
    await until(async () => (await pendingCount(client, stream, 'billing')) === 0 && applied.size === 4);
    const ids = events.map((event) => event.eventId);
    expect(calls[0]).toEqual(ids);
    // The retry starts at the failed entry: the two applied before it were acknowledged.
    expect(calls[1]).toEqual(ids.slice(2));
  });

  it('refuses options it cannot read with', () => {
    const base = { client, stream: 's', group: 'g', consumer: 'c', handle: ledger().handle };
    for (const bad of [{ stream: [] }, { stream: ['a', 'a'] }, { group: '' }, { consumer: 'x\ny' }, { batchSize: 0 }, { handle: 1 }, { handleBatch: async () => ({ outcomes: [] }) }]) {
      expect(() => redisStreamConsumer({ ...base, ...bad } as never)).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    }
  });
});
