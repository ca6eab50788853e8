import type { ClaimedEvent } from '@oncely/core/adapter';
import fc from 'fast-check';
import type { ClientSession } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { mongoOutbox } from '../../src/index.js';
import { at, freezeNow } from '../support/mingo.js';
import { mingoDb } from '../support/mingo-db.js';

// The MongoDB claim by aggregate as a model: the outbox's own code over a mingo-backed Db (not
// MongoDB; calls run one at a time, so this proves the algorithm, not the server's concurrency),
// under random interleavings of three relays. The properties are the PostgreSQL claim model's.

freezeNow();
const RELAYS = 3;
const AGGREGATES = ['a', 'b'];
const committed = { inTransaction: () => true } as unknown as ClientSession;

/** One step of the model: what a relay (or the business, or the clock) does next. */
type Step =
  | { kind: 'enqueue'; aggregate: number }
  | { kind: 'claim'; relay: number; limit: number }
  | { kind: 'publish'; relay: number }
  | { kind: 'fail'; relay: number }
  | { kind: 'dead-letter'; relay: number }
  | { kind: 'crash'; relay: number; afterPublish: boolean }
  | { kind: 'requeue' };

const relay = fc.integer({ min: 0, max: RELAYS - 1 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('enqueue' as const), aggregate: fc.integer({ min: 0, max: AGGREGATES.length - 1 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('claim' as const), relay, limit: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('publish' as const), relay }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fail' as const), relay }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('dead-letter' as const), relay }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), relay, afterPublish: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('requeue' as const) }) },
);

/** Splits a batch as the relay does after a failure: each aggregate's first event, and the rest. */
function heads(events: readonly ClaimedEvent[]) {
  const seen = new Set<string>();
  const first: ClaimedEvent[] = [];
  const rest: ClaimedEvent[] = [];
  for (const event of events) {
    (seen.has(event.aggregateId) ? rest : first).push(event);
    seen.add(event.aggregateId);
  }
  return { first, rest };
}

async function runModel(steps: readonly Step[]): Promise<void> {
  const mingo = mingoDb();
  const outbox = mongoOutbox({ db: mingo.db });
  await outbox.ensureIndexes();
  const events = mingo.documents('oncely_outbox');
  const aggregates = mingo.documents('oncely_outbox_aggregates');
  const held: (readonly ClaimedEvent[])[] = Array.from({ length: RELAYS }, () => []);
  const enqueued: string[] = [];
  const firstDelivered = new Map<string, number[]>();
  const delivered = new Set<string>();
  const deliver = (batch: readonly ClaimedEvent[]) => {
    for (const event of batch) {
      if (delivered.has(event.eventId)) continue;
      delivered.add(event.eventId);
      firstDelivered.set(event.aggregateId, [...(firstDelivered.get(event.aggregateId) ?? []), event.aggregateSeq]);
    }
  };
  // The server clock passing a relay's leases: its events and aggregates become claimable.
  const expire = (owner: string) => {
    for (const document of [...events, ...aggregates]) {
      if (document.leaseOwner !== owner) continue;
      if ('claimableAt' in document) document.claimableAt = at(-1);
      else document.leaseExpiresAt = at(-1);
    }
  };
  const deadLetters = () => events.filter((document) => document.deadLetteredAt !== null && document.publishedAt === null).map((document) => String(document._id));
  const owner = (r: number) => `relay-${r}`;

  for (const s of steps) {
    if (s.kind === 'enqueue') {
      const event = await outbox.enqueue(committed, { aggregateType: 't', aggregateId: AGGREGATES[s.aggregate]!, eventType: 'e', payload: {} });
      enqueued.push(event.eventId);
    } else if (s.kind === 'requeue') {
      await outbox.requeue(deadLetters());
    } else if (s.kind === 'claim') {
      if (held[s.relay]!.length > 0) continue;
      const batch = await outbox.source.claim({ owner: owner(s.relay), limit: s.limit, leaseMs: 600_000 });
      expect(batch.length).toBeLessThanOrEqual(s.limit);
      // No other relay holds any aggregate of this batch, and each aggregate's events are in order.
      const others = new Set(held.flatMap((batchHeld, r) => (r === s.relay ? [] : batchHeld.map((e) => e.aggregateId))));
      for (const event of batch) expect(others.has(event.aggregateId)).toBe(false);
      for (const a of AGGREGATES) {
        const seqs = batch.filter((e) => e.aggregateId === a).map((e) => e.aggregateSeq);
        expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      }
      held[s.relay] = batch;
    } else {
      const batch = held[s.relay]!;
      held[s.relay] = [];
      if (batch.length === 0) continue;
      const { first, rest } = heads(batch);
      if (s.kind === 'publish') {
        deliver(batch);
        await outbox.source.markPublished(batch.map((e) => e.eventId));
      } else if (s.kind === 'fail') {
        await outbox.source.reschedule({ owner: owner(s.relay), retries: first.map((e) => ({ eventId: e.eventId, delayMs: 0, error: 'x' })) });
        await outbox.source.release({ owner: owner(s.relay), eventIds: rest.map((e) => e.eventId) });
      } else if (s.kind === 'dead-letter') {
        await outbox.source.deadLetter({ owner: owner(s.relay), letters: first.map((e) => ({ eventId: e.eventId, error: 'x' })) });
        await outbox.source.release({ owner: owner(s.relay), eventIds: rest.map((e) => e.eventId) });
      } else {
        if (s.afterPublish) deliver(batch);
        expire(owner(s.relay));
      }
    }
  }
  // Drain: every relay crashes, dead letters are requeued, and one relay publishes until nothing is left.
  for (let r = 0; r < RELAYS; r++) expire(owner(r));
  await outbox.requeue(deadLetters());
  for (let round = 0; round < enqueued.length + 1; round++) {
    const batch = await outbox.source.claim({ owner: 'drain', limit: 10, leaseMs: 600_000 });
    if (batch.length === 0) break;
    deliver(batch);
    await outbox.source.markPublished(batch.map((e) => e.eventId));
  }
  expect([...delivered].sort()).toEqual([...enqueued].sort());
  for (const seqs of firstDelivered.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  // Drained aggregates are forgotten once a claim finds them empty.
  expect(await outbox.source.claim({ owner: 'drain', limit: 10, leaseMs: 600_000 })).toEqual([]);
  expect(aggregates).toEqual([]);
}

describe('the MongoDB claim by aggregate as a model (mingo, not MongoDB), under random interleavings of three relays', () => {
  it('first deliveries of each aggregate are in sequence order, no two relays hold one aggregate, and nothing is lost', async () => {
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 40 }), runModel), {
      numRuns: 150,
      // A dead letter must hold its aggregate back: the case a claim that skipped over it would fail.
      examples: [
        [
          [
            { kind: 'enqueue', aggregate: 0 }, { kind: 'enqueue', aggregate: 0 }, { kind: 'claim', relay: 0, limit: 1 },
            { kind: 'dead-letter', relay: 0 }, { kind: 'claim', relay: 1, limit: 4 }, { kind: 'publish', relay: 1 },
          ],
        ],
      ],
    });
  }, 120_000);
});
