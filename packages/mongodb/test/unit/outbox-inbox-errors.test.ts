import { isOncelyError, isStorageError } from '@oncely/core';
import * as driver7 from 'mongodb';
import type { ClientSession, Collection, Db } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { type InboxDocument, mongoInbox, mongoOutbox } from '../../src/index.js';

// Scripted stand-ins for a session and a collection (not MongoDB): they feed the driver's real error
// objects into the inbox and outbox and check what reaches the caller.

const session = (inTransaction: boolean) => ({ inTransaction: () => inTransaction }) as unknown as ClientSession;
const inboxOver = (updateOne: () => Promise<unknown>) => mongoInbox({ collection: { updateOne } as unknown as Collection<InboxDocument> });
const input = { consumer: 'billing', eventId: 'evt-1' };

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('inbox', () => {
  it('runs the consumer function only for a new pair and reports a redelivery as duplicate', async () => {
    let applied = 0;
    const fn = async () => {
      applied++;
    };
    expect(await inboxOver(async () => ({ upsertedCount: 1 })).process(session(true), input, fn)).toBe('processed');
    expect(await inboxOver(async () => ({ upsertedCount: 0, matchedCount: 1 })).process(session(true), input, fn)).toBe('duplicate');
    expect(applied).toBe(1);
  });

  it('refuses a session without an open transaction before touching storage', async () => {
    let touched = false;
    const error = await failure(
      inboxOver(async () => {
        touched = true;
        return { upsertedCount: 1 };
      }).process(session(false), input, async () => undefined),
    );
    expect(isOncelyError(error, 'invalid_state')).toBe(true);
    expect(touched).toBe(false);
  });

  it('passes a write conflict on unchanged, so withTransaction retries; other driver errors become StorageError', async () => {
    const conflict = new driver7.MongoServerError({ code: 112, codeName: 'WriteConflict', errmsg: 'Write conflict', errorLabels: ['TransientTransactionError'] });
    expect(await failure(inboxOver(async () => Promise.reject(conflict)).process(session(true), input, async () => undefined))).toBe(conflict);
    const reset = new driver7.MongoNetworkError('connection closed');
    const wrapped = await failure(inboxOver(async () => Promise.reject(reset)).process(session(true), input, async () => undefined));
    expect(isStorageError(wrapped)).toBe(true);
    expect((wrapped as Error).cause).toBe(reset);
  });

  it('rejects a malformed consumer or event id', async () => {
    const error = await failure(inboxOver(async () => ({ upsertedCount: 1 })).process(session(true), { consumer: '', eventId: 'e' }, async () => undefined));
    expect(isOncelyError(error, 'invalid_event')).toBe(true);
  });
});

describe('outbox enqueue', () => {
  const outbox = mongoOutbox({ db: { collection: () => ({}) } as unknown as Db });
  const newEvent = { aggregateType: 'order', aggregateId: 'ord_1', eventType: 'order.created.v1', payload: { total: 10 } };

  it('refuses to write outside a transaction: the event would not commit with the business writes', async () => {
    expect(isOncelyError(await failure(outbox.enqueue(session(false), newEvent)), 'invalid_state')).toBe(true);
  });

  it('validates the event before anything else', async () => {
    expect(isOncelyError(await failure(outbox.enqueue(session(true), { ...newEvent, payload: Number.NaN })), 'invalid_event')).toBe(true);
    expect(isOncelyError(await failure(outbox.enqueue(session(true), { ...newEvent, aggregateSeq: 0 })), 'invalid_event')).toBe(true);
  });
});

describe('outbox claim', () => {
  it('a claim whose compare-and-set fails for one head hands back the heads it leased, unattempted, and fails', async () => {
    const document = (id: string) => ({
      _id: id, aggregateType: 'order', aggregateId: id, aggregateSeq: 1, eventType: 'e', payload: '{}',
      createdAt: new Date(0), publishedAt: null, deadLetteredAt: null, attempts: 1, availableAt: new Date(0),
    });
    const released: unknown[] = [];
    const collection = {
      aggregate: () => ({ toArray: async () => [{ ids: ['a'] }, { ids: ['b'] }, { ids: ['c'] }] }),
      findOneAndUpdate: async (filter: { _id: string }) => {
        if (filter._id === 'b') throw new driver7.MongoNetworkError('connection reset');
        return document(filter._id);
      },
      updateMany: async (filter: unknown, update: unknown) => {
        released.push({ filter, update });
        return { matchedCount: 2 };
      },
    };
    const db = { collection: () => collection } as unknown as Db;
    const outbox = mongoOutbox({ db });
    const error = await failure(outbox.source.claim({ owner: 'relay-1', limit: 3, leaseMs: 1_000 }));
    expect(isStorageError(error)).toBe(true);
    expect(released).toHaveLength(1);
    const [{ filter, update }] = released as [{ filter: Record<string, unknown>; update: object[] }];
    expect(filter).toEqual({ _id: { $in: ['a', 'c'] }, leaseOwner: 'relay-1', publishedAt: null });
    // The release update counts the attempt back.
    expect(JSON.stringify(update)).toContain('$subtract');
  });
});

describe('outbox claim: several events of one aggregate', () => {
  it('keeps only a run from the first event of each aggregate, and hands back an event leased after one another relay took', async () => {
    const document = (id: string, seq: number) => ({
      _id: id, aggregateType: 'order', aggregateId: id.slice(0, 1), aggregateSeq: seq, eventType: 'e', payload: '{}',
      createdAt: new Date(0), publishedAt: null, deadLetteredAt: null, attempts: 1, availableAt: new Date(0),
    });
    const released: unknown[] = [];
    const collection = {
      aggregate: () => ({ toArray: async () => [{ ids: ['a1', 'a2', 'a3'] }, { ids: ['b1', 'b2'] }] }),
      // Another relay won b1 between the aggregation and the compare-and-set.
      findOneAndUpdate: async (filter: { _id: string }) => (filter._id === 'b1' ? null : document(filter._id, Number(filter._id.slice(1)))),
      updateMany: async (filter: unknown) => {
        released.push(filter);
        return { matchedCount: 1 };
      },
    };
    const outbox = mongoOutbox({ db: { collection: () => collection } as unknown as Db });
    const claimed = await outbox.source.claim({ owner: 'relay-1', limit: 4, leaseMs: 1_000 });
    expect(claimed.map((event) => event.eventId)).toEqual(['a1', 'a2', 'a3']);
    // The limit cut b at b1; b2 was never asked for. Nothing else was leased, so nothing goes back.
    expect(released).toEqual([]);
    const wider = await outbox.source.claim({ owner: 'relay-1', limit: 10, leaseMs: 1_000 });
    expect(wider.map((event) => event.eventId)).toEqual(['a1', 'a2', 'a3']);
    expect(released).toEqual([{ _id: { $in: ['b2'] }, leaseOwner: 'relay-1', publishedAt: null }]);
  });
});
