import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ManualClock, manualClock } from '@oncely/core';
import { createRelay, type OutboxEvent, type OutboxSource, type Publisher, type Relay } from '@oncely/core/outbox';
import { applyWithInbox, type MemoryBroker, memoryBroker, type Verdict } from '../../src/index.js';
import { type MemoryOutbox, memoryOutbox } from '../../src/index.js';

const LEASE_MS = 1_000;
const never = () => new Promise<never>(() => undefined);

type Command =
  | { readonly kind: 'enqueue'; readonly aggregate: number }
  | { readonly kind: 'round'; readonly relay: number }
  | { readonly kind: 'crash'; readonly relay: number; readonly afterAck: boolean }
  | { readonly kind: 'tick'; readonly ms: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('enqueue' as const), aggregate: fc.nat(4) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('round' as const), relay: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), relay: fc.nat(2), afterAck: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 2 * LEASE_MS }) }) },
);

/** Publish verdicts in order; `true` fails the event. Once used up, every publish succeeds. */
function verdicts(fails: readonly boolean[]): () => Verdict {
  let next = 0;
  return () => (fails[next++] ? 'fail' : 'ack');
}

/** A relay over `source` and `broker` with small, test-sized delays. */
function relayOf(source: OutboxSource, publisher: Publisher, clock: ManualClock, batchSize: number): Relay {
  return createRelay({
    source,
    publisher,
    clock,
    batchSize,
    leaseMs: LEASE_MS,
    publishTimeoutMs: LEASE_MS / 2,
    maxAttempts: 10_000,
    backoff: { baseMs: 10, capMs: 100 },
  });
}

/** Runs healthy relays until nothing is left to publish (lapsed leases and backoffs included). */
async function drain(outbox: MemoryOutbox, relays: readonly Relay[], clock: ManualClock): Promise<void> {
  for (let round = 0; round < 500 && outbox.rows.some((row) => row.publishedAt === undefined); round++) {
    for (const relay of relays) await relay.runOnce();
    await clock.advance(LEASE_MS + 1);
  }
}

/** The invariants: nothing lost, and each aggregate's events first reach the broker in `aggregateSeq` order. */
function expectDelivered(outbox: MemoryOutbox, broker: MemoryBroker, enqueued: readonly OutboxEvent[]) {
  expect(outbox.rows.every((row) => row.publishedAt !== undefined)).toBe(true);
  const published = new Set(broker.log.map((event) => event.eventId));
  expect(enqueued.every((event) => published.has(event.eventId))).toBe(true);
  const expected = new Map<string, number[]>();
  for (const event of enqueued) {
    const key = `${event.aggregateType}/${event.aggregateId}`;
    expected.set(key, [...(expected.get(key) ?? []), event.aggregateSeq]);
  }
  expect(applyWithInbox(broker.log)).toEqual(expected);
}

describe('relay properties (in-memory outbox and broker)', () => {
  it('no event is lost and each aggregate is first published in aggregateSeq order, whatever publishes fail and however relays crash', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(commandArb, { minLength: 1, maxLength: 60 }),
        fc.array(fc.boolean(), { maxLength: 80 }),
        fc.integer({ min: 1, max: 4 }),
        async (commands, fails, batchSize) => {
          const clock = manualClock(0);
          const outbox = memoryOutbox({ clock });
          const broker = memoryBroker();
          const healthy = broker.publisher(verdicts(fails));
          const relays = [0, 1, 2].map(() => relayOf(outbox.source, healthy, clock, batchSize));
          const enqueued: OutboxEvent[] = [];
          for (const command of commands) {
            if (command.kind === 'enqueue') {
              enqueued.push(outbox.add({ aggregateType: 'account', aggregateId: `a${command.aggregate}`, eventType: 'x', payload: {} }));
            } else if (command.kind === 'round') {
              await relays[command.relay]!.runOnce();
            } else if (command.kind === 'tick') {
              await clock.advance(command.ms);
            } else {
              // SIGKILL in miniature: the relay publishes (or not), then never talks to the outbox again.
              const dying: Publisher = {
                name: 'dying',
                async publish(events, signal) {
                  if (command.afterAck) await healthy.publish(events, signal);
                  return never();
                },
              };
              const frozen = { ...outbox.source, markPublished: never, reschedule: never, deadLetter: never, release: never };
              void relayOf(frozen, dying, clock, batchSize).runOnce();
              await clock.advance(0);
              relays[command.relay] = relayOf(outbox.source, healthy, clock, batchSize);
            }
          }
          await drain(outbox, relays, clock);
          expectDelivered(outbox, broker, enqueued);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('relays racing on one outbox keep every aggregate in order, whatever the interleaving of their calls', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.nat(3), { minLength: 1, maxLength: 30 }),
        fc.array(fc.boolean(), { maxLength: 40 }),
        async (s, aggregates, fails) => {
          const clock = manualClock(0);
          const outbox = memoryOutbox({ clock });
          const broker = memoryBroker();
          const inner = broker.publisher(verdicts(fails));
          // Every storage answer and broker acknowledgement arrives when the scheduler says so.
          const source: OutboxSource = {
            ...outbox.source,
            claim: s.scheduleFunction(outbox.source.claim),
            markPublished: s.scheduleFunction(outbox.source.markPublished),
            reschedule: s.scheduleFunction(outbox.source.reschedule),
          };
          const publisher: Publisher = { name: 'scheduled', publish: s.scheduleFunction(inner.publish) };
          const relays = [0, 1, 2].map(() => relayOf(source, publisher, clock, 2));
          const enqueued = aggregates.map((aggregate) =>
            outbox.add({ aggregateType: 'account', aggregateId: `a${aggregate}`, eventType: 'x', payload: {} }),
          );
          for (let round = 0; round < 3; round++) {
            const batches = Promise.all(relays.map((relay) => relay.runOnce()));
            await s.waitFor(batches);
            await clock.advance(100);
          }
          const direct = [0, 1].map(() => relayOf(outbox.source, inner, clock, 2));
          await drain(outbox, direct, clock);
          expectDelivered(outbox, broker, enqueued);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('with few attempts allowed, every event ends published, dead-lettered or held behind a dead letter of its aggregate', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(3), { minLength: 1, maxLength: 25 }),
        fc.array(fc.boolean(), { maxLength: 60 }),
        fc.integer({ min: 1, max: 3 }),
        async (aggregates, fails, maxAttempts) => {
          const clock = manualClock(0);
          const outbox = memoryOutbox({ clock });
          const broker = memoryBroker();
          const enqueued = aggregates.map((aggregate) =>
            outbox.add({ aggregateType: 'account', aggregateId: `a${aggregate}`, eventType: 'x', payload: {} }),
          );
          const relay = createRelay({
            source: outbox.source,
            publisher: broker.publisher(verdicts(fails)),
            clock,
            maxAttempts,
            backoff: { baseMs: 10, capMs: 100 },
          });
          // Each round waits out the largest backoff, so a round that claims nothing means the end.
          for (let round = 0; round < 200; round++) {
            if ((await relay.runOnce()).claimed === 0) break;
            await clock.advance(101);
          }
          const published = new Set(broker.log.map((event) => event.eventId));
          for (const event of enqueued) {
            const row = outbox.rows.find((r) => r.event.eventId === event.eventId)!;
            const blocked = outbox.rows.some(
              (r) => r.event.aggregateId === event.aggregateId && r.event.aggregateSeq < event.aggregateSeq && r.deadLetteredAt !== undefined,
            );
            if (row.deadLetteredAt !== undefined) {
              expect(row.attempts).toBe(maxAttempts);
              expect(published.has(event.eventId)).toBe(false);
            } else if (blocked) {
              expect(row.publishedAt).toBeUndefined();
            } else {
              expect(row.publishedAt).toBeDefined();
              expect(published.has(event.eventId)).toBe(true);
            }
          }
          for (const seqs of applyWithInbox(broker.log).values()) {
            expect(seqs).toEqual(seqs.map((_, index) => index + 1));
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
