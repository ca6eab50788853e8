import { describe, expect, it } from 'vitest';
import { isOncelyError, manualClock } from '@oncely/core';
import { createRelay, type Publisher, type RelayEvent } from '@oncely/core/outbox';
import { applyWithInbox, memoryBroker } from '../../src/index.js';
import { memoryOutbox } from '../../src/index.js';

const order = (aggregateId: string, n = 1) => ({
  aggregateType: 'order',
  aggregateId,
  eventType: 'order.updated.v1',
  payload: { n },
});

function setup(options: { wakeUps?: boolean } = {}) {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const outbox = memoryOutbox({ clock, ...options });
  const broker = memoryBroker();
  const events: RelayEvent[] = [];
  const onEvent = (event: RelayEvent) => events.push(event);
  return { clock, outbox, broker, events, onEvent };
}

/** A publisher whose batches wait until the test opens the gate. */
function gatedPublisher(inner: Publisher) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const publisher: Publisher = {
    name: 'gated',
    async publish(events, signal) {
      await gate;
      return inner.publish(events, signal);
    },
  };
  return { publisher, open };
}

const never = () => new Promise<never>(() => undefined);

describe('relay: publishing', () => {
  it('publishes every enqueued event and marks it published', async () => {
    const { clock, outbox, broker } = setup();
    const sent = [outbox.add(order('a')), outbox.add(order('b')), outbox.add(order('c'))];
    const relay = createRelay({ source: outbox.source, publisher: broker.publisher(), clock });
    const batch = await relay.runOnce();
    expect(batch).toEqual({ claimed: 3, published: 3, rescheduled: 0, deadLettered: 0, released: 0, leaseLost: 0 });
    expect(broker.log.map((event) => event.eventId)).toEqual(sent.map((event) => event.eventId));
    expect(outbox.rows.every((row) => row.publishedAt !== undefined && row.leaseOwner === undefined)).toBe(true);
    expect((await relay.runOnce()).claimed).toBe(0);
  });

  it("claims each aggregate's next events in sequence order, several per round", async () => {
    const { clock, outbox, broker } = setup();
    for (const id of ['a', 'a', 'a', 'b', 'b']) outbox.add(order(id));
    const relay = createRelay({ source: outbox.source, publisher: broker.publisher(), clock });
    const rounds: string[][] = [];
    for (let i = 0; i < 4; i++) {
      const before = broker.log.length;
      await relay.runOnce();
      rounds.push(broker.log.slice(before).map((event) => `${event.aggregateId}${event.aggregateSeq}`));
    }
    expect(rounds).toEqual([['a1', 'a2', 'a3', 'b1', 'b2'], [], [], []]);
  });

  it('respects batchSize', async () => {
    const { clock, outbox, broker } = setup();
    for (const id of ['a', 'b', 'c', 'd', 'e']) outbox.add(order(id));
    const relay = createRelay({ source: outbox.source, publisher: broker.publisher(), batchSize: 2, clock });
    expect((await relay.runOnce()).published).toBe(2);
    expect(broker.log.map((event) => event.aggregateId)).toEqual(['a', 'b']);
  });

  it('reports the publish lag from enqueue to mark', async () => {
    const { clock, outbox, broker, events, onEvent } = setup();
    outbox.add(order('a'));
    await clock.advance(250);
    await createRelay({ source: outbox.source, publisher: broker.publisher(), clock, onEvent }).runOnce();
    const published = events.find((event) => event.type === 'outbox_published');
    expect(published).toMatchObject({ type: 'outbox_published', aggregateType: 'order', attempt: 1, lagMs: 250 });
  });
});

describe('relay: failures', () => {
  it('retries a failed publish after a full-jitter delay and not before', async () => {
    const { clock, outbox, broker, events, onEvent } = setup();
    const event = outbox.add(order('a'));
    let refusals = 1;
    const publisher = broker.publisher(() => (refusals-- > 0 ? 'fail' : 'ack'));
    const relay = createRelay({
      source: outbox.source,
      publisher,
      backoff: { baseMs: 1_000, capMs: 60_000 },
      random: () => 0.5,
      clock,
      onEvent,
    });
    expect((await relay.runOnce()).rescheduled).toBe(1);
    expect(events.find((e) => e.type === 'outbox_publish_failed')).toMatchObject({ attempt: 1, retryInMs: 500 });
    expect(outbox.rows[0]!.lastError).toContain('broker refused');
    await clock.advance(499);
    expect((await relay.runOnce()).claimed).toBe(0);
    await clock.advance(1);
    expect((await relay.runOnce()).published).toBe(1);
    expect(broker.log.map((e) => e.eventId)).toEqual([event.eventId]);
    expect(outbox.rows[0]!.attempts).toBe(2);
  });

  it('grows the retry ceiling exponentially up to the cap', async () => {
    const { clock, outbox, broker, events, onEvent } = setup();
    outbox.add(order('a'));
    const relay = createRelay({
      source: outbox.source,
      publisher: broker.publisher(() => 'fail'),
      backoff: { baseMs: 100, capMs: 500 },
      maxAttempts: 20,
      random: () => 0.999_999,
      clock,
      onEvent,
    });
    for (let i = 0; i < 5; i++) {
      await relay.runOnce();
      await clock.advance(1_000);
    }
    const delays = events.flatMap((e) => (e.type === 'outbox_publish_failed' ? [e.retryInMs] : []));
    expect(delays).toEqual([99, 199, 399, 499, 499]);
  });

  it('dead-letters after maxAttempts and holds back the later events of that aggregate only', async () => {
    const { clock, outbox, broker, events, onEvent } = setup();
    const poison = outbox.add(order('a'));
    outbox.add(order('a', 2));
    const other = outbox.add(order('b'));
    const relay = createRelay({
      source: outbox.source,
      publisher: broker.publisher((event) => (event.eventId === poison.eventId ? 'fail' : 'ack')),
      maxAttempts: 3,
      backoff: { baseMs: 10, capMs: 10 },
      statsIntervalMs: 1,
      purge: false,
      clock,
      onEvent,
    });
    for (let i = 0; i < 6; i++) {
      await relay.runOnce();
      await clock.advance(20);
    }
    expect(broker.log.map((event) => event.eventId)).toEqual([other.eventId]);
    const parked = outbox.rows.find((row) => row.event.eventId === poison.eventId)!;
    expect(parked.deadLetteredAt).toBeDefined();
    expect(parked.attempts).toBe(3);
    expect(events.filter((event) => event.type === 'outbox_dead_lettered')).toHaveLength(1);
    expect(await outbox.source.stats()).toEqual({ unpublished: 2, oldestUnpublishedAgeMs: 120, deadLettered: 1 });
  });

  it('when an event fails, the later events of its aggregate in the batch are released unattempted and follow it in order', async () => {
    const { clock, outbox, broker } = setup();
    const a1 = outbox.add(order('a'));
    const a2 = outbox.add(order('a', 2));
    const a3 = outbox.add(order('a', 3));
    const b1 = outbox.add(order('b'));
    let failFirst = true;
    const relay = createRelay({
      source: outbox.source,
      // A publisher that breaks the contract and acknowledges a2 after a1 failed: the relay still holds a2 back.
      publisher: {
        name: 'flaky',
        publish: async (events) =>
          events.map((event) => {
            if (event.eventId === a1.eventId && failFirst) return { kind: 'failed' as const, error: new Error('blip') };
            if (event.eventId === a2.eventId) return { kind: 'failed' as const, error: new Error('follows a1') };
            broker.log.push(event);
            return { kind: 'published' as const };
          }),
      },
      backoff: { baseMs: 10, capMs: 10 },
      random: () => 0.99,
      clock,
    });
    const first = await relay.runOnce();
    expect(first).toMatchObject({ claimed: 4, published: 2, rescheduled: 1, released: 1 });
    const row = (id: string) => outbox.rows.find((r) => r.event.eventId === id)!;
    expect([row(a2.eventId).attempts, row(a2.eventId).leaseOwner]).toEqual([0, undefined]);
    expect(broker.log.map((event) => event.eventId)).toEqual([a3.eventId, b1.eventId]);
    failFirst = false;
  });

  it('refuses a claimed batch outside the contract (an aggregate out of order, over the limit) as corrupt_record and releases it', async () => {
    const { outbox } = setup();
    const a1 = outbox.add(order('a'));
    const a2 = outbox.add(order('a', 2));
    const backwards = {
      ...outbox.source,
      claim: async (input: Parameters<typeof outbox.source.claim>[0]) => [...(await outbox.source.claim(input))].reverse(),
    };
    const relay = createRelay({ source: backwards, publisher: memoryBroker().publisher() });
    await expect(relay.runOnce()).rejects.toSatisfy((error: unknown) => isOncelyError(error) && error.code === 'corrupt_record');
    expect(outbox.rows.map((r) => [r.event.eventId, r.attempts, r.leaseOwner])).toEqual([
      [a1.eventId, 0, undefined],
      [a2.eventId, 0, undefined],
    ]);
    const tooMany = createRelay({ source: outbox.source, publisher: memoryBroker().publisher(), batchSize: 1 });
    const overLimit = { ...outbox.source, claim: (input: Parameters<typeof outbox.source.claim>[0]) => outbox.source.claim({ ...input, limit: 2 }) };
    const greedy = createRelay({ source: overLimit, publisher: memoryBroker().publisher(), batchSize: 1 });
    await expect(greedy.runOnce()).rejects.toSatisfy((error: unknown) => isOncelyError(error) && error.code === 'corrupt_record');
    expect((await tooMany.runOnce()).published).toBe(1);
  });

  it('dead-letters without publishing again an event whose relays died more than maxAttempts times', async () => {
    const { clock, outbox, broker, events, onEvent } = setup();
    outbox.add(order('a'));
    for (let crash = 0; crash < 2; crash++) {
      await outbox.source.claim({ owner: `crashed-${crash}`, limit: 10, leaseMs: 100 });
      await clock.advance(100);
    }
    const relay = createRelay({ source: outbox.source, publisher: broker.publisher(), maxAttempts: 2, clock, onEvent });
    expect(await relay.runOnce()).toMatchObject({ claimed: 1, published: 0, deadLettered: 1 });
    expect(broker.log).toEqual([]);
    const letter = events.find((event) => event.type === 'outbox_dead_lettered');
    expect(letter).toMatchObject({ attempt: 3 });
    expect(isOncelyError(letter && 'error' in letter ? letter.error : undefined, 'attempt_timeout')).toBe(true);
  });

  it('a relay that dies after the broker acknowledged, before the mark, leaves the event to be published again', async () => {
    const { clock, outbox, broker, events, onEvent } = setup();
    const event = outbox.add(order('a'));
    const inner = broker.publisher();
    // The first relay's broker call succeeds, then the relay never comes back (as after SIGKILL).
    const dying: Publisher = {
      name: 'dying',
      async publish(batch, signal) {
        await inner.publish(batch, signal);
        return never();
      },
    };
    const frozen = { ...outbox.source, markPublished: never, reschedule: never, release: never };
    void createRelay({ source: frozen, publisher: dying, leaseMs: 1_000, clock }).runOnce();
    await clock.advance(0);
    expect(broker.log).toHaveLength(1);
    const survivor = createRelay({ source: outbox.source, publisher: inner, leaseMs: 1_000, clock, onEvent });
    expect((await survivor.runOnce()).claimed).toBe(0);
    await clock.advance(1_000);
    expect(await survivor.runOnce()).toMatchObject({ claimed: 1, published: 1 });
    expect(broker.log.map((e) => e.eventId)).toEqual([event.eventId, event.eventId]);
    expect(applyWithInbox(broker.log)).toEqual(new Map([['order/a', [1]]]));
    expect(events.find((e) => e.type === 'outbox_published')).toMatchObject({ attempt: 2 });
  });

  it('counts a publish that outlives publishTimeoutMs as failed, even if the publisher ignores its signal', async () => {
    const { clock, outbox, events, onEvent } = setup();
    outbox.add(order('a'));
    const relay = createRelay({
      source: outbox.source,
      publisher: { name: 'deaf', publish: never },
      leaseMs: 1_000,
      publishTimeoutMs: 300,
      random: () => 0,
      clock,
      onEvent,
    });
    const batch = relay.runOnce();
    await clock.advance(0);
    await clock.advance(300);
    expect(await batch).toMatchObject({ claimed: 1, rescheduled: 1 });
    const failure = events.find((event) => event.type === 'outbox_publish_failed');
    expect(isOncelyError(failure && 'error' in failure ? failure.error : undefined, 'attempt_timeout')).toBe(true);
    expect(outbox.rows[0]!.leaseOwner).toBeUndefined();
  });

  it('a stale relay whose lease was taken over cannot reschedule the event', async () => {
    const { clock, outbox, broker, events, onEvent } = setup();
    outbox.add(order('a'));
    const failing = gatedPublisher(broker.publisher(() => 'fail'));
    const stale = createRelay({ source: outbox.source, publisher: failing.publisher, leaseMs: 1_000, publishTimeoutMs: 999, clock, onEvent });
    const staleBatch = stale.runOnce();
    await clock.advance(0);
    // Real time passes on another relay's clock: the lease lapses and a healthy relay publishes.
    for (const row of outbox.rows) row.leaseUntil = clock.now();
    await createRelay({ source: outbox.source, publisher: broker.publisher(), clock }).runOnce();
    failing.open();
    expect(await staleBatch).toMatchObject({ rescheduled: 0, leaseLost: 1 });
    expect(events.find((event) => event.type === 'outbox_lease_lost')).toMatchObject({ stage: 'reschedule', count: 1 });
    expect(outbox.rows[0]!.publishedAt).toBeDefined();
    expect(outbox.rows[0]!.nextAttemptAt).toBeLessThanOrEqual(clock.now());
  });

  it('a publisher answering the wrong number of outcomes fails the whole batch', async () => {
    const { clock, outbox } = setup();
    outbox.add(order('a'));
    outbox.add(order('b'));
    const relay = createRelay({
      source: outbox.source,
      publisher: { name: 'short', publish: async () => [{ kind: 'published' }] },
      clock,
    });
    expect(await relay.runOnce()).toMatchObject({ published: 0, rescheduled: 2 });
    expect(outbox.rows.every((row) => row.publishedAt === undefined)).toBe(true);
  });

  it('runOnce rejects with a StorageError when the claim fails, and publishes nothing', async () => {
    const { clock, outbox, broker } = setup();
    outbox.add(order('a'));
    outbox.failNext('claim');
    const relay = createRelay({ source: outbox.source, publisher: broker.publisher(), clock });
    const error = await relay.runOnce().catch((e: unknown) => e);
    expect(isOncelyError(error, 'storage_error')).toBe(true);
    expect(broker.log).toEqual([]);
  });

  it('an unmarked publish (mark failed) is reported and published again once the lease lapses', async () => {
    const { clock, outbox, broker, events, onEvent } = setup();
    outbox.add(order('a'));
    outbox.failNext('markPublished');
    const relay = createRelay({ source: outbox.source, publisher: broker.publisher(), leaseMs: 500, clock, onEvent });
    expect((await relay.runOnce()).published).toBe(0);
    expect(events.find((event) => event.type === 'relay_error')).toMatchObject({ stage: 'markPublished', retryInMs: 500 });
    await clock.advance(500);
    expect((await relay.runOnce()).published).toBe(1);
    expect(broker.log).toHaveLength(2);
    expect(applyWithInbox(broker.log).get('order/a')).toEqual([1]);
  });
});

describe('relay: loop, stop and observability', () => {
  it('keeps running through storage failures, backing off with jitter, then publishes', async () => {
    const { clock, outbox, broker, events, onEvent } = setup();
    outbox.add(order('a'));
    outbox.failNext('claim', 2);
    const relay = createRelay({
      source: outbox.source,
      publisher: broker.publisher(),
      errorBackoff: { baseMs: 100, capMs: 1_000 },
      random: () => 0.5,
      statsIntervalMs: 0,
      purge: false,
      clock,
      onEvent,
    });
    relay.start();
    await clock.advance(0);
    expect(broker.log).toEqual([]);
    await clock.advance(50);
    await clock.advance(100);
    expect(broker.log).toHaveLength(1);
    const errors = events.filter((event) => event.type === 'relay_error');
    expect(errors.map((event) => (event.type === 'relay_error' ? [event.stage, event.retryInMs] : []))).toEqual([
      ['claim', 50],
      ['claim', 100],
    ]);
    await relay.stop();
    expect(relay.status).toBe('stopped');
  });

  it('an idle relay is woken by the source wake-up before its poll interval', async () => {
    const { clock, outbox, broker } = setup({ wakeUps: true });
    const relay = createRelay({
      source: outbox.source,
      publisher: broker.publisher(),
      pollIntervalMs: 3_600_000,
      statsIntervalMs: 0,
      purge: false,
      clock,
    });
    relay.start();
    await clock.advance(0);
    outbox.add(order('a'));
    await clock.advance(0);
    expect(broker.log).toHaveLength(1);
    await relay.stop();
  });

  it('a relay keeps claiming while there is work: a backlog of several batches goes out without any wait', async () => {
    const { clock, outbox, broker } = setup();
    for (let i = 0; i < 7; i++) outbox.add(order(`a${i}`));
    let claims = 0;
    const source = {
      ...outbox.source,
      claim: (input: Parameters<typeof outbox.source.claim>[0]) => {
        claims++;
        return outbox.source.claim(input);
      },
    };
    // No wake-up and an hour between polls: only a relay that claims again at once gets past the first batch.
    const relay = createRelay({ source, publisher: broker.publisher(), batchSize: 2, pollIntervalMs: 3_600_000, statsIntervalMs: 0, purge: false, clock });
    relay.start();
    await clock.advance(0);
    expect(broker.log).toHaveLength(7);
    // Four batches, then one empty claim before the relay idles.
    expect(claims).toBe(5);
    await relay.stop();
  });

  it('an event enqueued while a batch is in flight is claimed as soon as that batch is marked, not after the poll interval', async () => {
    const { clock, outbox, broker } = setup();
    const gated = gatedPublisher(broker.publisher());
    outbox.add(order('a'));
    const relay = createRelay({ source: outbox.source, publisher: gated.publisher, pollIntervalMs: 3_600_000, statsIntervalMs: 0, purge: false, clock });
    relay.start();
    await clock.advance(0);
    outbox.add(order('b'));
    gated.open();
    await clock.advance(0);
    expect(broker.log.map((event) => event.aggregateId)).toEqual(['a', 'b']);
    await relay.stop();
  });

  it('a wake-up that fails is dropped and the relay polls instead', async () => {
    const { clock, outbox, broker, events, onEvent } = setup();
    let closed = false;
    const source = {
      ...outbox.source,
      subscribe: async () => ({
        wait: async () => {
          throw new Error('listener connection lost');
        },
        close: async () => {
          closed = true;
        },
      }),
    };
    const relay = createRelay({ source, publisher: broker.publisher(), pollIntervalMs: 1_000, statsIntervalMs: 0, purge: false, clock, onEvent });
    relay.start();
    await clock.advance(0);
    expect(closed).toBe(true);
    expect(events.find((event) => event.type === 'relay_error')).toMatchObject({ stage: 'subscribe' });
    outbox.add(order('a'));
    await clock.advance(1_000);
    expect(broker.log).toHaveLength(1);
    await relay.stop();
  });

  it('without a wake-up, an idle relay polls every pollIntervalMs', async () => {
    const { clock, outbox, broker } = setup();
    const relay = createRelay({ source: outbox.source, publisher: broker.publisher(), pollIntervalMs: 1_000, clock });
    relay.start();
    await clock.advance(0);
    outbox.add(order('a'));
    await clock.advance(999);
    expect(broker.log).toHaveLength(0);
    await clock.advance(1);
    expect(broker.log).toHaveLength(1);
    await relay.stop();
  });

  it('stop() lets the batch in flight finish and mark its events', async () => {
    const { clock, outbox, broker, events, onEvent } = setup();
    outbox.add(order('a'));
    outbox.add(order('b'));
    const gated = gatedPublisher(broker.publisher());
    const relay = createRelay({ source: outbox.source, publisher: gated.publisher, statsIntervalMs: 0, clock, onEvent });
    relay.start();
    await clock.advance(0);
    const stopped = relay.stop();
    expect(relay.status).toBe('stopping');
    gated.open();
    await stopped;
    expect(relay.status).toBe('stopped');
    expect(outbox.rows.every((row) => row.publishedAt !== undefined)).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'relay_stopped', released: 0 });
  });

  it('stop() releases unconfirmed events unattempted when its grace period ends', async () => {
    const { clock, outbox, broker, events, onEvent } = setup();
    const event = outbox.add(order('a'));
    const relay = createRelay({
      source: outbox.source,
      publisher: { name: 'hung', publish: never },
      statsIntervalMs: 0,
      clock,
      onEvent,
    });
    relay.start();
    await clock.advance(0);
    expect(outbox.rows[0]!.attempts).toBe(1);
    const stopped = relay.stop({ timeoutMs: 200 });
    await clock.advance(200);
    await stopped;
    expect(outbox.rows[0]).toMatchObject({ attempts: 0, leaseOwner: undefined, publishedAt: undefined });
    expect(events.at(-1)).toMatchObject({ type: 'relay_stopped', released: 1 });
    await createRelay({ source: outbox.source, publisher: broker.publisher(), clock }).runOnce();
    expect(broker.log.map((e) => e.eventId)).toEqual([event.eventId]);
    expect(outbox.rows[0]!.attempts).toBe(1);
  });

  it('reports gauges and purges published events older than retainMs', async () => {
    const { clock, outbox, broker, events, onEvent } = setup();
    outbox.add(order('a'));
    outbox.add(order('a', 2));
    const relay = createRelay({
      source: outbox.source,
      publisher: broker.publisher(),
      statsIntervalMs: 1_000,
      purge: { retainMs: 5_000, intervalMs: 1_000 },
      pollIntervalMs: 1_000,
      clock,
      onEvent,
    });
    await clock.advance(300);
    relay.start();
    await clock.advance(0);
    expect(events.find((event) => event.type === 'outbox_stats')).toMatchObject({
      unpublished: 2,
      oldestUnpublishedAgeMs: 300,
      deadLettered: 0,
    });
    await clock.advance(7_000);
    expect(outbox.rows).toHaveLength(0);
    const purged = events.flatMap((event) => (event.type === 'outbox_purged' ? [event.count] : []));
    expect(purged.reduce((a, b) => a + b, 0)).toBe(2);
    expect(events.filter((event) => event.type === 'outbox_stats').at(-1)).toMatchObject({ unpublished: 0, oldestUnpublishedAgeMs: 0 });
    await relay.stop();
  });

  it('refuses options it cannot run with, and a second start', () => {
    const { outbox, broker } = setup();
    const base = { source: outbox.source, publisher: broker.publisher() };
    for (const bad of [
      { batchSize: 0 },
      { leaseMs: 1_000, publishTimeoutMs: 1_000 },
      { maxAttempts: 1.5 },
      { backoff: { baseMs: 0, capMs: 10 } },
      { backoff: { baseMs: 10, capMs: 5 } },
      { id: '' },
    ]) {
      expect(() => createRelay({ ...base, ...bad })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    }
    const relay = createRelay(base);
    relay.start();
    expect(() => relay.start()).toThrow(expect.objectContaining({ code: 'invalid_state' }));
    return relay.stop();
  });
});
