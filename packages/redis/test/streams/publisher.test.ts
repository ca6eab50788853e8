import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStreamEntry, partitionOf, redisStreamPublisher } from '../../src/index.js';
import { cleanUp, connect, eventOf, streamPrefix } from './stream-fixtures.js';

const client = connect();
const prefix = streamPrefix();
const signal = new AbortController().signal;

/** Every event a stream holds, in order. */
async function entriesOf(stream: string) {
  const entries = await client.xrange(stream, '-', '+');
  return entries.map(([, fields]) => {
    const parsed = parseStreamEntry(fields);
    if (parsed.kind !== 'event') throw new Error(`malformed entry: ${parsed.problem}`);
    return parsed.event;
  });
}

beforeAll(async () => {
  await client.ping();
});

afterAll(async () => {
  await cleanUp(client, prefix);
  await client.quit();
});

describe('redisStreamPublisher', () => {
  it('appends one entry per event carrying its eventId and every field', async () => {
    const stream = `${prefix}orders`;
    const events = [eventOf('a', 1, { amount: '10.00', tags: ['x'] }), eventOf('b', 1), eventOf('c', 7, null)];
    const publisher = redisStreamPublisher({ client, stream });
    expect(await publisher.publish(events, signal)).toEqual(events.map(() => ({ kind: 'published' })));
    expect(await entriesOf(stream)).toEqual(events);
    const [[, fields]] = (await client.xrange(stream, '-', '+', 'COUNT', 1)) as [[string, string[]]];
    expect(fields.slice(0, 2)).toEqual(['eventId', events[0]!.eventId]);
  });

  it('carries the event headers (trace context) in a headers field; a header that is not a string fails that event only', async () => {
    const stream = `${prefix}headers`;
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const traced = { ...eventOf('a', 1), headers: { traceparent } };
    const bad = { ...eventOf('b', 1), headers: { traceparent: 7 } as unknown as Record<string, string> };
    const [ok, refused] = await redisStreamPublisher({ client, stream }).publish([traced, bad], signal);
    expect(ok).toEqual({ kind: 'published' });
    expect(refused).toMatchObject({ kind: 'failed', error: expect.objectContaining({ code: 'invalid_event' }) });
    expect(await entriesOf(stream)).toEqual([traced]);
  });

  it('routes each event to the stream its function picks', async () => {
    const publisher = redisStreamPublisher({ client, stream: (event) => `${prefix}p${partitionOf(event.aggregateId, 3)}` });
    const events = Array.from({ length: 30 }, (_, i) => eventOf(`acct-${i}`, 1));
    await publisher.publish(events, signal);
    for (let partition = 0; partition < 3; partition++) {
      const expected = events.filter((event) => partitionOf(event.aggregateId, 3) === partition);
      expect(await entriesOf(`${prefix}p${partition}`)).toEqual(expected);
    }
  });

  it('an XADD Redis refuses fails that event only', async () => {
    const bad = `${prefix}not-a-stream`;
    await client.set(bad, 'a string, not a stream');
    const good = `${prefix}good`;
    const events = [eventOf('a', 1), eventOf('b', 1), eventOf('c', 1)];
    const publisher = redisStreamPublisher({ client, stream: (event) => (event.aggregateId === 'b' ? bad : good) });
    const outcomes = await publisher.publish(events, signal);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['published', 'failed', 'published']);
    expect(String(outcomes[1]!.kind === 'failed' ? outcomes[1]!.error : '')).toContain('WRONGTYPE');
    expect((await entriesOf(good)).map((event) => event.aggregateId)).toEqual(['a', 'c']);
  });

  it('a stream function that throws fails that event only', async () => {
    const stream = `${prefix}picky`;
    const publisher = redisStreamPublisher({
      client,
      stream: (event) => {
        if (event.aggregateId === 'boom') throw new Error('no partition for boom');
        return stream;
      },
    });
    const outcomes = await publisher.publish([eventOf('boom', 1), eventOf('fine', 1)], signal);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['failed', 'published']);
    expect((await entriesOf(stream)).map((event) => event.aggregateId)).toEqual(['fine']);
  });

  it('caps the stream approximately when maxLen is set', async () => {
    const stream = `${prefix}capped`;
    const publisher = redisStreamPublisher({ client, stream, maxLen: 10 });
    for (let i = 0; i < 20; i++) await publisher.publish(Array.from({ length: 50 }, (_, j) => eventOf('x', i * 50 + j + 1)), signal);
    // `~` lets Redis trim whole macro nodes only, so the length stays near, not at, the cap.
    expect(await client.xlen(stream)).toBeLessThan(1_000);
  });

  it('refuses options it cannot publish with', () => {
    for (const bad of [{ stream: '' }, { stream: 42 }, { maxLen: 0 }, { client: undefined }]) {
      expect(() => redisStreamPublisher({ client, stream: 's', ...bad } as never)).toThrow(
        expect.objectContaining({ code: 'invalid_option' }),
      );
    }
  });
});
