import fc from 'fast-check';
import type { ClientSession } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { mongoOutbox } from '../../src/index.js';
import { freezeNow } from '../support/mingo.js';
import { mingoDb } from '../support/mingo-db.js';

// The outbox's own code over a mingo-backed Db (not MongoDB): with the clock frozen, every event is
// enqueued in the same millisecond, so only an insertion-ordered field can say which came first.

freezeNow();
const committed = { inTransaction: () => true } as unknown as ClientSession;
const idPair = fc.uniqueArray(fc.uuid(), { minLength: 2, maxLength: 2 }).map((ids) => [...ids].sort().reverse());

describe('outbox ties within one millisecond (mingo model)', () => {
  it('two events of different aggregates enqueued in the same millisecond are claimed in enqueue order, whatever their ids sort as (property)', async () => {
    await fc.assert(
      fc.asyncProperty(idPair, idPair, async ([firstId, secondId], [firstAggregate, secondAggregate]) => {
        const outbox = mongoOutbox({ db: mingoDb().db });
        await outbox.ensureIndexes();
        // Ids and aggregates that sort the other way round from the enqueue order.
        const event = (eventId: string, aggregateId: string) => ({ eventId, aggregateType: 'order', aggregateId, eventType: 'order.placed.v1', payload: {} });
        const first = await outbox.enqueue(committed, event(firstId!, firstAggregate!));
        const second = await outbox.enqueue(committed, event(secondId!, secondAggregate!));
        expect(first.createdAt.getTime()).toBe(second.createdAt.getTime());
        const [claimed] = await outbox.source.claim({ owner: 'relay-1', limit: 1, leaseMs: 60_000 });
        expect(claimed?.eventId).toBe(first.eventId);
        const [next] = await outbox.source.claim({ owner: 'relay-1', limit: 1, leaseMs: 60_000 });
        expect(next?.eventId).toBe(second.eventId);
      }),
      { numRuns: 50 },
    );
  });
});
