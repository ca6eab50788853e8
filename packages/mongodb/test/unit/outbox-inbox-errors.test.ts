import { isOncelyError, isStorageError } from '@oncely/core';
import * as driver7 from 'mongodb';
import type { ClientSession, Collection, Db } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { type InboxDocument, mongoInbox, mongoOutbox } from '../../src/index.js';
import { mingoDb } from '../support/mingo-db.js';

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

describe('outbox claim: several events of one aggregate', () => {
  it('keeps only a run from the first event of each aggregate, and hands back an event leased after one another relay took', async () => {
    // The outbox's code over a mingo-backed Db (not MongoDB); another relay takes b1 just before this
    // relay's compare-and-set on it, as a relay whose lease on aggregate b lapsed still could.
    let leases: number | undefined;
    const mingo = mingoDb((collection, method) => {
      if (leases === undefined || collection !== 'oncely_outbox' || method !== 'findOneAndUpdate' || ++leases !== 4) return;
      Object.assign(mingo.documents('oncely_outbox').find((document) => document._id === 'b1')!, { leaseOwner: 'relay-2', leaseExpiresAt: new Date(Date.now() + 60_000) });
    });
    const outbox = mongoOutbox({ db: mingo.db });
    await outbox.ensureIndexes();
    const tx = session(true);
    for (const [eventId, aggregateId] of [['a1', 'a'], ['a2', 'a'], ['a3', 'a'], ['b1', 'b'], ['b2', 'b']] as const) {
      await outbox.enqueue(tx, { eventId, aggregateType: 'order', aggregateId, eventType: 'e', payload: {} });
    }
    leases = 0;
    const claimed = await outbox.source.claim({ owner: 'relay-1', limit: 10, leaseMs: 1_000 });
    expect(claimed.map((event) => event.eventId)).toEqual(['a1', 'a2', 'a3']);
    // b2 was leased after b1 was lost: it went back, unattempted.
    const b2 = mingo.documents('oncely_outbox').find((document) => document._id === 'b2')!;
    expect([b2.leaseOwner, b2.attempts]).toEqual([undefined, 0]);
  });
});
