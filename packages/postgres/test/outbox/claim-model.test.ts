import { PGlite } from '@electric-sql/pglite';
import type { ClaimedEvent } from '@oncely/core/adapter';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresOutbox, sqlDriver } from '../../src/index.js';
import { enqueueCommitted, freshOutboxTable } from './outbox-support.js';

const RELAYS = 3;
const AGGREGATES = ['a', 'b'];

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

describe('the PostgreSQL claim as a model (PGlite), under random interleavings of several relays', () => {
  const db = new PGlite();
  afterAll(() => db.close());

  it('first deliveries of each aggregate are in sequence order, no two relays hold one aggregate, and nothing is lost', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 40 }), async (steps) => {
        const table = await freshOutboxTable(db, 'public');
        const outbox = postgresOutbox({ db, table, channel: false });
        const driver = sqlDriver(db);
        const held: (readonly ClaimedEvent[])[] = Array.from({ length: RELAYS }, () => []);
        const enqueued: string[] = [];
        const firstDelivered = new Map<string, number[]>();
        const delivered = new Set<string>();
        const deliver = (events: readonly ClaimedEvent[]) => {
          for (const event of events) {
            if (delivered.has(event.eventId)) continue;
            delivered.add(event.eventId);
            firstDelivered.set(event.aggregateId, [...(firstDelivered.get(event.aggregateId) ?? []), event.aggregateSeq]);
          }
        };
        // The storage clock passing a relay's lease: its events and aggregates become claimable.
        const expire = (owner: string) =>
          driver.query(
            `WITH lapsed AS (UPDATE ${outbox.table} SET lease_expires_at = statement_timestamp() - interval '1 ms'
               WHERE lease_owner = $1 RETURNING aggregate_type, aggregate_id)
             UPDATE "${table}_aggregates" a SET claimable_at = statement_timestamp() - interval '1 ms'
             FROM lapsed WHERE a.aggregate_type = lapsed.aggregate_type AND a.aggregate_id = lapsed.aggregate_id`,
            [owner],
          );
        /** Splits a batch as the relay does after a failure: each aggregate's first event, and the rest. */
        const heads = (events: readonly ClaimedEvent[]) => {
          const seen = new Set<string>();
          const first: ClaimedEvent[] = [];
          const rest: ClaimedEvent[] = [];
          for (const event of events) {
            (seen.has(event.aggregateId) ? rest : first).push(event);
            seen.add(event.aggregateId);
          }
          return { first, rest };
        };
        const owner = (r: number) => `relay-${r}`;

        for (const s of steps) {
          if (s.kind === 'enqueue') {
            const event = await enqueueCommitted(db, outbox, { aggregateType: 't', aggregateId: AGGREGATES[s.aggregate]!, eventType: 'e', payload: {} });
            enqueued.push(event.eventId);
          } else if (s.kind === 'requeue') {
            const { rows } = await driver.query<{ event_id: string }>(`SELECT event_id FROM ${outbox.table} WHERE dead_lettered_at IS NOT NULL`);
            await outbox.requeue(rows.map((row) => row.event_id));
          } else if (s.kind === 'claim') {
            if (held[s.relay]!.length > 0) continue;
            const batch = await outbox.source.claim({ owner: owner(s.relay), limit: s.limit, leaseMs: 600_000 });
            expect(batch.length).toBeLessThanOrEqual(s.limit);
            // No other relay holds any aggregate of this batch, and each aggregate's events are consecutive, in order.
            const others = new Set(held.flatMap((events, r) => (r === s.relay ? [] : events.map((e) => e.aggregateId))));
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
              await expire(owner(s.relay));
            }
          }
        }
        // Drain: every relay crashes, dead letters are requeued, and one relay publishes until nothing is left.
        for (let r = 0; r < RELAYS; r++) await expire(owner(r));
        const { rows } = await driver.query<{ event_id: string }>(`SELECT event_id FROM ${outbox.table} WHERE dead_lettered_at IS NOT NULL`);
        await outbox.requeue(rows.map((row) => row.event_id));
        for (let round = 0; round < enqueued.length + 1; round++) {
          const batch = await outbox.source.claim({ owner: 'drain', limit: 10, leaseMs: 600_000 });
          if (batch.length === 0) break;
          deliver(batch);
          await outbox.source.markPublished(batch.map((e) => e.eventId));
        }
        expect([...delivered].sort()).toEqual([...enqueued].sort());
        for (const seqs of firstDelivered.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1));
        const left = await driver.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}_aggregates"`);
        // Drained aggregates are forgotten once a claim finds them empty.
        const last = await outbox.source.claim({ owner: 'drain', limit: 10, leaseMs: 600_000 });
        expect(last).toEqual([]);
        expect(Number(left.rows[0]!.n)).toBeLessThanOrEqual(AGGREGATES.length);
      }),
      {
        numRuns: 30,
        // A dead letter must hold its aggregate back: the case a claim that skipped over it would fail.
        examples: [[[
          { kind: 'enqueue', aggregate: 0 }, { kind: 'enqueue', aggregate: 0 }, { kind: 'claim', relay: 0, limit: 1 },
          { kind: 'dead-letter', relay: 0 }, { kind: 'claim', relay: 1, limit: 4 }, { kind: 'publish', relay: 1 },
        ]]],
      },
    );
  }, 120_000);
});
