import { isOncelyError, isStorageError, manualClock } from '@oncely/core';
import type { InboxEvent } from '@oncely/core/outbox';
import * as driver7 from 'mongodb';
import type { ClientSession, Collection, Db, MongoClient } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { type InboxDocument, mongoInbox, mongoOutbox } from '../../src/index.js';
import { processedBeforeFilter } from '../../src/inbox/mongo-inbox.js';
import { at, freezeNow, matches } from '../support/mingo.js';

// Scripted stand-ins for sessions and collections (not MongoDB) feeding the driver's real error
// objects into what PostgreSQL also has: duplicate event ids, sequence conflicts, requeue, the inbox's
// run, purgeProcessed and duplicate reports. Real-server runs of the conformance suites prove the rest.

freezeNow();
const session = { inTransaction: () => true } as unknown as ClientSession;
const newEvent = { aggregateType: 'order', aggregateId: 'ord_1', eventType: 'order.created.v1', payload: { total: 10 } };
const duplicateKey = (index: string, keyPattern: Record<string, number>) =>
  new driver7.MongoServerError({ code: 11000, errmsg: `E11000 duplicate key error collection: test.oncely_outbox index: ${index} dup key`, keyPattern });

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/** An outbox whose sequence counter and event collection answer from the given functions. */
function outboxOver(events: Partial<Record<'findOneAndUpdate' | 'updateMany' | 'find' | 'bulkWrite', (...args: unknown[]) => unknown>>, sequences = {}) {
  const counter = { findOneAndUpdate: async () => ({ _id: 'agg', seq: 1 }), updateOne: async () => ({ matchedCount: 1 }), ...sequences };
  const db = { collection: (name: string) => (name.endsWith('_sequences') ? counter : events) } as unknown as Db;
  return mongoOutbox({ db });
}

describe('outbox: one behaviour for a duplicate eventId, as in PostgreSQL', () => {
  it('an event id already stored is duplicate_event (the server aborts the transaction), not the stored event', async () => {
    const taken = duplicateKey('_id_', { _id: 1 });
    const error = await failure(outboxOver({ findOneAndUpdate: async () => Promise.reject(taken) }).enqueue(session, { ...newEvent, eventId: 'evt-1' }));
    expect(isOncelyError(error, 'duplicate_event')).toBe(true);
    expect((error as Error).cause).toBe(taken);
  });

  it('a duplicate key on another index is a StorageError, not a duplicate event', async () => {
    const other = duplicateKey('oncely_outbox_aggregate_seq', { aggregateType: 1, aggregateId: 1, aggregateSeq: 1 });
    const error = await failure(outboxOver({ findOneAndUpdate: async () => Promise.reject(other) }).enqueue(session, newEvent));
    expect(isStorageError(error)).toBe(true);
    expect(error).toMatchObject({ adapter: 'mongodb', operation: 'outbox.enqueue' });
  });

  it('a caller aggregateSeq not above the counter is outbox_sequence_conflict, as in PostgreSQL', async () => {
    const collision = duplicateKey('_id_', { _id: 1 });
    const outbox = outboxOver({ findOneAndUpdate: async () => ({}) }, { updateOne: async () => Promise.reject(collision) });
    expect(isOncelyError(await failure(outbox.enqueue(session, { ...newEvent, aggregateSeq: 3 })), 'outbox_sequence_conflict')).toBe(true);
  });

  it('a write conflict still goes back unchanged, so withTransaction retries and then sees the stored event', async () => {
    const conflict = new driver7.MongoServerError({ code: 112, codeName: 'WriteConflict', errmsg: 'Write conflict', errorLabels: ['TransientTransactionError'] });
    expect(await failure(outboxOver({ findOneAndUpdate: async () => Promise.reject(conflict) }).enqueue(session, newEvent))).toBe(conflict);
  });
});

describe('outbox: requeue', () => {
  it('requeues the given dead letters in one updateMany and counts what it matched; no ids, no call', async () => {
    const calls: unknown[][] = [];
    const woken: unknown[] = [];
    const outbox = outboxOver({
      // The requeued events' aggregates, read first so the requeue can wake them.
      find: () => ({ toArray: async () => [{ aggregateType: 'order', aggregateId: 'o1' }] }),
      updateMany: async (...args) => {
        calls.push(args);
        return { matchedCount: 2 };
      },
      bulkWrite: async (operations) => {
        woken.push(...(operations as { updateOne: { filter: unknown } }[]).map((operation) => operation.updateOne.filter));
        return { matchedCount: 1 };
      },
    });
    expect(await outbox.requeue(['a', 'b', 'c'])).toBe(2);
    expect(await outbox.requeue([])).toBe(0);
    expect(calls.length).toBe(1);
    expect(calls[0]![0]).toMatchObject({ _id: { $in: ['a', 'b', 'c'] } });
    expect(woken).toEqual([{ _id: '["order","o1"]' }]);
  });

  it('a failed requeue is a StorageError naming outbox.requeue', async () => {
    const error = await failure(
      outboxOver({ find: () => ({ toArray: async () => [] }), updateMany: async () => Promise.reject(new driver7.MongoNetworkError('reset')) }).requeue(['a']),
    );
    expect(error).toMatchObject({ code: 'storage_error', operation: 'outbox.requeue' });
  });
});

describe('inbox: what PostgreSQL has', () => {
  const input = { consumer: 'billing', eventId: 'evt-1' };

  /** A scripted inbox collection and a client whose transactions run the callback once and commit from `commit`. */
  function inboxOver(collection: Record<string, unknown>, commit: () => Promise<void> = async () => undefined, events: InboxEvent[] = []) {
    const tx = { inTransaction: () => true } as unknown as ClientSession;
    const client = {
      withSession: async (work: (s: unknown) => Promise<unknown>) =>
        work({
          withTransaction: async (callback: (s: ClientSession) => Promise<unknown>) => {
            const value = await callback(tx);
            await commit();
            return value;
          },
        }),
    } as unknown as MongoClient;
    const inbox = mongoInbox({
      collection: { ...collection, db: { client } } as unknown as Collection<InboxDocument>,
      onEvent: (event) => events.push(event),
      clock: manualClock(1_234),
    });
    return { inbox, events };
  }

  it('reports each duplicate stamped by the injected clock; a throwing listener changes nothing', async () => {
    const { inbox, events } = inboxOver({ updateOne: async () => ({ upsertedCount: 0, matchedCount: 1 }) });
    expect(await inbox.run(input, async () => undefined)).toBe('duplicate');
    expect(events).toEqual([{ type: 'inbox_duplicate', at: 1_234, consumer: 'billing', eventId: 'evt-1' }]);
    const loud = mongoInbox({
      collection: { updateOne: async () => ({ upsertedCount: 0 }) } as unknown as Collection<InboxDocument>,
      onEvent: () => {
        throw new Error('sink down');
      },
    });
    expect(await loud.process({ inTransaction: () => true } as unknown as ClientSession, input, async () => undefined)).toBe('duplicate');
  });

  it('run applies a new pair in a transaction of its own; fn errors pass unchanged, a failed commit is a StorageError', async () => {
    const { inbox } = inboxOver({ updateOne: async () => ({ upsertedCount: 1 }) });
    let applied = 0;
    expect(await inbox.run(input, async () => void applied++)).toBe('processed');
    expect(applied).toBe(1);
    const boom = new Error('ledger down');
    expect(await failure(inbox.run(input, async () => Promise.reject(boom)))).toBe(boom);
    const lost = new driver7.MongoNetworkError('connection reset during commit');
    const failing = inboxOver({ updateOne: async () => ({ upsertedCount: 1 }) }, async () => Promise.reject(lost)).inbox;
    const error = await failure(failing.run(input, async () => undefined));
    expect(error).toMatchObject({ code: 'storage_error', operation: 'inbox.run' });
    expect((error as Error).cause).toBe(lost);
  });

  it('run validates the delivery before opening a session', async () => {
    const { inbox } = inboxOver({});
    expect(isOncelyError(await failure(inbox.run({ consumer: '', eventId: 'e' }, async () => undefined)), 'invalid_event')).toBe(true);
  });

  it('purgeProcessed deletes a bounded batch of the oldest old records, by the server clock', async () => {
    const finds: unknown[][] = [];
    const { inbox } = inboxOver({
      find: (...args: unknown[]) => {
        finds.push(args);
        return { toArray: async () => [{ _id: 'x' }, { _id: 'y' }] };
      },
      deleteMany: async () => ({ deletedCount: 2 }),
    });
    expect(await inbox.purgeProcessed({ olderThanMs: 60_000, limit: 2 })).toBe(2);
    expect(finds[0]![1]).toMatchObject({ sort: { processedAt: 1 }, limit: 2 });
    const filter = processedBeforeFilter(60_000);
    expect(matches(filter, { _id: 'a', processedAt: at(-60_000) })).toBe(true);
    expect(matches(filter, { _id: 'b', processedAt: at(-59_999) })).toBe(false);
  });
});
