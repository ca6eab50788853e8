import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStreamEntry, partitionOf, redisStreamPublisher } from '../../src/index.js';
import { streamScripts } from '../../src/streams/stream-scripts.js';
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

  it('once an event fails, no later event of its aggregate is sent, even to another stream (XADD refused)', async () => {
    const bad = `${prefix}wrong-type`;
    await client.set(bad, 'a string, not a stream');
    const good = `${prefix}after-refusal`;
    const [a1, a2, b1, a3] = [eventOf('a', 1), eventOf('a', 2), eventOf('b', 1), eventOf('a', 3)];
    // a's first event goes to the refused key, its later ones to a stream that would take them.
    const publisher = redisStreamPublisher({ client, stream: (event) => (event === a1 ? bad : good) });
    const outcomes = await publisher.publish([a1, a2, b1, a3], signal);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['failed', 'failed', 'published', 'failed']);
    expect(String(outcomes[0]!.kind === 'failed' ? outcomes[0]!.error : '')).toContain('WRONGTYPE');
    expect((await entriesOf(good)).map((event) => event.eventId)).toEqual([b1.eventId]);
  });

  it('once an event fails, no later event of its aggregate in the same stream is sent (a header it cannot carry)', async () => {
    const stream = `${prefix}after-bad-header`;
    const bad = { ...eventOf('a', 1), headers: { traceparent: 7 } as unknown as Record<string, string> };
    const [a2, b1] = [eventOf('a', 2), eventOf('b', 1)];
    const outcomes = await redisStreamPublisher({ client, stream }).publish([bad, a2, b1], signal);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['failed', 'failed', 'published']);
    expect((await entriesOf(stream)).map((event) => event.eventId)).toEqual([b1.eventId]);
  });

  it('the append script stops an aggregate at its first refused XADD in the stream and goes on with the others', async () => {
    const stream = `${prefix}script`;
    streamScripts.register(client);
    // An entry with an odd field list is one XADD Redis refuses; a's next entry would be accepted.
    const entries = [['a', ['k', 'v', 'odd']], ['a', ['k', 'v']], ['b', ['k', 'v']], ['a', ['k', 'v']]] as const;
    const args = ['0', ...entries.flatMap(([aggregate, fields]) => [aggregate, String(fields.length), ...fields])];
    const replies = (await streamScripts.call(client, 'append', [stream], args)) as unknown[];
    expect(replies).toEqual([[expect.stringContaining('wrong number of arguments')], 0, expect.stringMatching(/^\d+-\d+$/), 0]);
    expect(await client.xlen(stream)).toBe(1);
  });

  it('whatever events fail, each aggregate is published as a prefix of its events and nothing after a failure reaches a stream', async () => {
    const bad = `${prefix}refusing`;
    await client.set(bad, 'a string, not a stream');
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        // Per event: its aggregate (3 of them) and the stream it is routed to (2 streams and the refusing key).
        fc.array(fc.record({ aggregate: fc.nat(2), route: fc.nat(2) }), { minLength: 1, maxLength: 30 }),
        async (plan) => {
          run += 1;
          const streams = [`${prefix}prop${run}:0`, `${prefix}prop${run}:1`, bad];
          const seq = [0, 0, 0];
          const events = plan.map(({ aggregate }) => eventOf(`agg${aggregate}`, ++seq[aggregate]!));
          const route = new Map(events.map((event, i) => [event.eventId, streams[plan[i]!.route]!]));
          const publisher = redisStreamPublisher({ client, stream: (event) => route.get(event.eventId)! });
          const outcomes = await publisher.publish(events, signal);
          const published = new Set(events.filter((_, i) => outcomes[i]!.kind === 'published').map((event) => event.eventId));
          for (let aggregate = 0; aggregate < 3; aggregate++) {
            const kinds = events.flatMap((event, i) => (event.aggregateId === `agg${aggregate}` ? [outcomes[i]!.kind] : []));
            const firstFailed = kinds.indexOf('failed');
            if (firstFailed >= 0) expect(kinds.slice(firstFailed).every((kind) => kind === 'failed')).toBe(true);
          }
          for (const stream of streams.slice(0, 2)) {
            // Exactly the published events routed there, each aggregate's in sequence order (aggregates may interleave).
            const held = await entriesOf(stream);
            const expected = events.filter((event) => route.get(event.eventId) === stream && published.has(event.eventId));
            expect(held.map((event) => event.eventId).sort()).toEqual(expected.map((event) => event.eventId).sort());
            for (let aggregate = 0; aggregate < 3; aggregate++) {
              const order = held.filter((event) => event.aggregateId === `agg${aggregate}`).map((event) => event.aggregateSeq);
              expect(order).toEqual([...order].sort((x, y) => x - y));
            }
          }
        },
      ),
      { numRuns: 40 },
    );
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
