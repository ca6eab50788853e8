import { isStorageError, manualClock, StorageError } from '@oncely/core';
import type { ClaimedEvent, OutboxClaimInput, OutboxSource } from '@oncely/core/adapter';
import { createRelay, type Publisher } from '@oncely/core/outbox';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { memoryOutbox } from '../../src/index.js';

// A source's claim answer is checked against what the relay asked for: outside the contract it is corrupt_record, and nothing is published.
const order = (aggregateId: string) => ({ aggregateType: 'order', aggregateId, eventType: 'order.updated.v1', payload: { aggregateId } });

/** The memory outbox's real source, its claim answer rewritten on the way back (given what the relay asked). */
function setup(rewrite: (events: ClaimedEvent[], input: OutboxClaimInput, inner: OutboxSource) => unknown | Promise<unknown>) {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const outbox = memoryOutbox({ clock });
  for (const id of ['a', 'b', 'c']) outbox.add(order(id));
  outbox.add(order('a'));
  const inner = outbox.source;
  const source: OutboxSource = { ...inner, claim: async (input) => (await rewrite([...(await inner.claim(input))], input, inner)) as ClaimedEvent[] };
  let published = 0;
  const publisher: Publisher = {
    name: 'counting',
    publish: async (events) => {
      published += events.length;
      return events.map(() => ({ kind: 'published' as const }));
    },
  };
  const relay = createRelay({ source, publisher, batchSize: 2, clock });
  return { relay, published: () => published };
}

async function runOnce(rewrite: Parameters<typeof setup>[0]) {
  const { relay, published } = setup(rewrite);
  const error = await relay.runOnce().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return { error, published: published() };
}

describe('relay: a claim answer outside the contract is corrupt_record, and nothing is published', () => {
  it.each<[string, Parameters<typeof setup>[0]]>([
    ['undefined', () => undefined],
    ['an object instead of a list', (events) => ({ events })],
    // Real events, each claimed once: the batch, then what a second claim leases (more than the relay asked for).
    ['more events than batchSize', async (events, input, inner) => [...events, ...(await inner.claim({ ...input, limit: 5 }))]],
    ['an event twice', (events) => [events[0], events[0]]],
    ['two events of one aggregate out of sequence order', (events) => [{ ...events[0]!, eventId: 'not-asked-for', aggregateSeq: 2 }, events[0]]],
    ['null among the events', (events) => [events[0], null]],
    ['an event without an eventId', (events) => [{ ...events[0]!, eventId: undefined }]],
    ['an event with attempt 0', (events) => [{ ...events[0]!, attempt: 0 }]],
    ['an event with aggregateSeq "1"', (events) => [{ ...events[0]!, aggregateSeq: '1' }]],
    ['an event whose createdAt is a string', (events) => [{ ...events[0]!, createdAt: events[0]!.createdAt.toISOString() }]],
    ['an event whose createdAt is an invalid Date', (events) => [{ ...events[0]!, createdAt: new Date(Number.NaN) }]],
    ['an event without an aggregateType', (events) => [{ ...events[0]!, aggregateType: '' }]],
  ])('%s', async (_name, rewrite) => {
    const { error, published } = await runOnce(rewrite);
    expect(error).toBeInstanceOf(StorageError);
    expect(error).toMatchObject({ code: 'corrupt_record', operation: 'outbox.claim', adapter: 'memory' });
    expect(published).toBe(0);
  });

  it('the same wrapper passing the answer through publishes the batch', async () => {
    const { error, published } = await runOnce((events) => events);
    expect(error).toBeUndefined();
    expect(published).toBe(2);
  });

  it('property: one member of one claimed event replaced by a wrong value is corrupt_record, nothing published', async () => {
    const wrong = {
      eventId: fc.oneof(fc.constant(''), fc.integer(), fc.constant(undefined)),
      aggregateType: fc.oneof(fc.constant(''), fc.integer(), fc.constant(null)),
      aggregateId: fc.oneof(fc.constant(''), fc.boolean()),
      eventType: fc.oneof(fc.constant(''), fc.constant(undefined)),
      aggregateSeq: fc.oneof(fc.integer({ max: 0 }), fc.double().filter((n) => !Number.isSafeInteger(n)), fc.string()),
      attempt: fc.oneof(fc.integer({ max: 0 }), fc.constant(1.5), fc.constant(undefined)),
      createdAt: fc.oneof(fc.integer(), fc.string(), fc.constant(new Date(Number.NaN))),
    };
    const member = fc.oneof(...Object.entries(wrong).map(([name, values]) => values.map((value) => [name, value] as const)));
    await fc.assert(
      fc.asyncProperty(member, fc.nat(1), async ([name, value], index) => {
        const { error, published } = await runOnce((events) => events.map((event, i) => (i === index ? { ...event, [name]: value } : event)));
        expect(isStorageError(error) && error.code === 'corrupt_record').toBe(true);
        expect(published).toBe(0);
      }),
      { numRuns: 150 },
    );
  });
});
