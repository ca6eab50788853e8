import { isOncelyError } from '@oncely/core';
import { partitionOf } from '@oncely/core/adapter';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventOf } from '@oncely/test-support';
import { ensureNatsStream, natsPublisher } from '../src/index.js';
import { connectNats, natsUp, suiteTitle, uniqueName } from './support/nats-server.js';

const signal = new AbortController().signal;

describe.skipIf(!natsUp)(suiteTitle('natsPublisher on the shared JetStream'), () => {
  let nc: NatsConnection;
  const stream = uniqueName('pub');
  const subject = `${stream}.events`;

  beforeAll(async () => {
    nc = await connectNats();
    await ensureNatsStream(nc, { name: stream, subjects: [`${stream}.>`], duplicateWindowMs: 60_000 });
  });
  afterAll(async () => {
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    await nc.close();
  });

  const messages = async () => (await (await jetstreamManager(nc)).streams.info(stream)).state.messages;

  it('reports published on the stream ack, with Nats-Msg-Id = eventId, and the duplicate window drops a republish', async () => {
    const publisher = natsPublisher({ connection: nc, subject, stream });
    const before = await messages();
    const event = eventOf('acct-1', 1);
    expect(await publisher.publish([event], signal)).toEqual([{ kind: 'published' }]);
    // A relay that died between the ack and the mark publishes the same event again.
    expect(await publisher.publish([event], signal)).toEqual([{ kind: 'published' }]);
    expect(await messages()).toBe(before + 1);
    const stored = await (await jetstreamManager(nc)).streams.getMessage(stream, { last_by_subj: subject });
    expect(stored?.header.get('Nats-Msg-Id')).toBe(event.eventId);
    expect(stored?.json<{ eventId: string }>().eventId).toBe(event.eventId);
  });

  it('carries the event headers (trace context) as NATS headers', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const event = eventOf('acct-h', 1, { headers: { traceparent, tracestate: 'vendor=1' } });
    await natsPublisher({ connection: nc, subject: `${stream}.headers` }).publish([event], signal);
    const stored = await (await jetstreamManager(nc)).streams.getMessage(stream, { last_by_subj: `${stream}.headers` });
    expect(stored?.header.get('traceparent')).toBe(traceparent);
    expect(stored?.header.get('tracestate')).toBe('vendor=1');
  });

  it('routes every event of an aggregate to its bucket subject <subject>.<partitionOf(aggregateId)>', async () => {
    const publisher = natsPublisher({ connection: nc, subject: `${stream}.b`, buckets: 4 });
    const events = ['a', 'b', 'c', 'd', 'e', 'f'].flatMap((id) => [eventOf(id, 1), eventOf(id, 2)]);
    await publisher.publish(events, signal);
    const jsm = await jetstreamManager(nc);
    const { state } = await jsm.streams.info(stream);
    const seen: { subject: string; aggregateId: string }[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      const stored = await jsm.streams.getMessage(stream, { seq });
      if (stored?.subject.startsWith(`${stream}.b.`)) seen.push({ subject: stored.subject, aggregateId: stored.json<{ aggregateId: string }>().aggregateId });
    }
    expect(seen).toHaveLength(events.length);
    for (const { subject: to, aggregateId } of seen) expect(to).toBe(`${stream}.b.${partitionOf(aggregateId, 4)}`);
    expect(new Set(seen.map((entry) => entry.subject)).size).toBeGreaterThan(1);
  });

  describe('bad input: a typed error, the event not published', () => {
    it('an event over the server max_payload is refused with invalid_event before it is sent', async () => {
      const before = await messages();
      const huge = eventOf('acct-big', 1, { payload: { blob: 'x'.repeat((nc.info?.max_payload ?? 1_048_576) + 1) } });
      const [outcome] = await natsPublisher({ connection: nc, subject }).publish([huge], signal);
      expect(outcome?.kind).toBe('failed');
      expect(isOncelyError(outcome?.kind === 'failed' && outcome.error, 'invalid_event')).toBe(true);
      expect(await messages()).toBe(before);
    });

    it('a header value that is not a string is refused with invalid_event', async () => {
      const bad = eventOf('acct-bad', 1, { headers: { traceparent: 42 } as unknown as Record<string, string> });
      const [outcome] = await natsPublisher({ connection: nc, subject }).publish([bad], signal);
      expect(outcome?.kind === 'failed' && isOncelyError(outcome.error, 'invalid_event')).toBe(true);
    });

    it('a subject no stream stores fails (no stream acknowledged it), and a stream mismatch too', async () => {
      const [missing] = await natsPublisher({ connection: nc, subject: `${uniqueName('nostream')}.x`, timeoutMs: 2_000 }).publish([eventOf('m', 1)], signal);
      expect(missing?.kind).toBe('failed');
      const [wrong] = await natsPublisher({ connection: nc, subject, stream: uniqueName('other') }).publish([eventOf('w', 1)], signal);
      expect(wrong?.kind).toBe('failed');
    });
  });
});
