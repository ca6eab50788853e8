import { isOncelyError, manualClock } from '@oncely/core';
import { createRelay, type Publisher, type RelayEvent } from '@oncely/core/outbox';
import { describe, expect, it } from 'vitest';
import { memoryBroker, memoryOutbox } from '../../src/index.js';

// The codes and stages a relay reports, each meaning one thing (see OncelyErrorCode in @oncely/core).
const order = (aggregateId: string) => ({ aggregateType: 'order', aggregateId, eventType: 'order.updated.v1', payload: {} });

function setup() {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const outbox = memoryOutbox({ clock });
  const events: RelayEvent[] = [];
  return { clock, outbox, events, onEvent: (event: RelayEvent) => events.push(event) };
}

describe('relay: error codes and stages', () => {
  it('a publisher that answers the wrong number of outcomes broke its contract: invalid_state, and the events are retried', async () => {
    const { clock, outbox, events, onEvent } = setup();
    outbox.add(order('a'));
    outbox.add(order('b'));
    const publisher: Publisher = { name: 'short', publish: async () => [{ kind: 'published' }] };
    const batch = await createRelay({ source: outbox.source, publisher, clock, onEvent }).runOnce();
    expect(batch).toMatchObject({ claimed: 2, published: 0, rescheduled: 2 });
    const failures = events.filter((event) => event.type === 'outbox_publish_failed');
    expect(failures.length).toBe(2);
    for (const failure of failures) expect(isOncelyError('error' in failure ? failure.error : undefined, 'invalid_state')).toBe(true);
  });

  it('a stop whose grace period ends aborts the publish in flight with aborted', async () => {
    const { clock, outbox } = setup();
    outbox.add(order('a'));
    let reason: unknown;
    const publisher: Publisher = {
      name: 'hung',
      publish: (_events, signal) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            reason = signal.reason;
            reject(signal.reason);
          }),
        ),
    };
    const relay = createRelay({ source: outbox.source, publisher, statsIntervalMs: 0, clock });
    relay.start();
    await clock.advance(0);
    const stopped = relay.stop({ timeoutMs: 100 });
    await clock.advance(100);
    await stopped;
    expect(isOncelyError(reason, 'aborted')).toBe(true);
  });

  it('relay_error names the OutboxSource method that failed: markPublished, deadLetter, purgePublished', async () => {
    const { clock, outbox, events, onEvent } = setup();
    outbox.add(order('a'));
    outbox.add(order('b'));
    outbox.failNext('markPublished');
    outbox.failNext('deadLetter');
    const broker = memoryBroker();
    const relay = createRelay({
      source: outbox.source,
      publisher: broker.publisher((event) => (event.aggregateId === 'b' ? 'fail' : 'ack')),
      maxAttempts: 1,
      clock,
      onEvent,
    });
    await relay.runOnce();
    outbox.failNext('purgePublished');
    relay.start();
    await clock.advance(0);
    await relay.stop();
    const stages = events.filter((event) => event.type === 'relay_error').map((event) => ('stage' in event ? event.stage : ''));
    expect(stages).toEqual(['markPublished', 'deadLetter', 'purgePublished']);
    for (const event of events) if (event.type === 'relay_error') expect((event.error as { operation?: string }).operation).toBe(`outbox.${event.stage}`);
  });
});
