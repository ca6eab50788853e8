import { isStorageError } from '@oncely/core';
import * as driver7 from 'mongodb';
import type { ClientSession } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { mongoOutbox } from '../../src/index.js';
import { aggregateKey, pendingEventsPipeline } from '../../src/outbox/outbox-queries.js';
import { freezeNow } from '../support/mingo.js';
import { type BeforeCommand, mingoDb } from '../support/mingo-db.js';

// The claim by aggregate over a mingo-backed Db (not MongoDB): each command is atomic here, and a
// test may run another caller's whole call before any command, to check the algorithm at every
// interleaving of round trips. What transactions and write conflicts add is for a real server.

freezeNow();
const committed = { inTransaction: () => true } as unknown as ClientSession;
const event = (aggregateId: string) => ({ aggregateType: 'order', aggregateId, eventType: 'order.changed.v1', payload: {} });

/** An outbox over a fresh mingo Db whose commands first run `before`. */
async function modelOutbox(before?: BeforeCommand) {
  let hook: BeforeCommand = () => undefined;
  const mingo = mingoDb((collection, method) => (before ?? hook)(collection, method));
  const outbox = mongoOutbox({ db: mingo.db });
  await outbox.ensureIndexes();
  return { mingo, outbox, setHook: (next: BeforeCommand) => (hook = next) };
}

/** Claims and publishes until nothing is left: the event ids that went out. */
async function drain(outbox: Awaited<ReturnType<typeof modelOutbox>>['outbox']): Promise<string[]> {
  const out: string[] = [];
  for (let round = 0; round < 20; round++) {
    const batch = await outbox.source.claim({ owner: 'drain', limit: 10, leaseMs: 60_000 });
    if (batch.length === 0) break;
    out.push(...batch.map((e) => e.eventId));
    await outbox.source.markPublished(batch.map((e) => e.eventId));
  }
  return out;
}

describe('forgetting an empty aggregate (mingo model)', () => {
  it('an enqueue that lands before any round trip of a claim that finds its aggregate empty is never stranded', async () => {
    // How many commands a claim of an empty aggregate sends, so every gap between them is tried.
    const probe = await modelOutbox();
    const first = await probe.outbox.enqueue(committed, event('a'));
    await probe.outbox.source.claim({ owner: 'r1', limit: 1, leaseMs: 60_000 });
    await probe.outbox.source.markPublished([first.eventId]);
    let commands = 0;
    probe.setHook(() => void commands++);
    expect(await probe.outbox.source.claim({ owner: 'r1', limit: 1, leaseMs: 60_000 })).toEqual([]);
    probe.setHook(() => undefined);
    expect(commands).toBeGreaterThanOrEqual(5);
    expect(probe.mingo.documents('oncely_outbox_aggregates')).toEqual([]);

    for (let gap = 0; gap <= commands; gap++) {
      const { outbox, setHook } = await modelOutbox();
      const a1 = await outbox.enqueue(committed, event('a'));
      await outbox.source.claim({ owner: 'r1', limit: 1, leaseMs: 60_000 });
      await outbox.source.markPublished([a1.eventId]);
      let seen = 0;
      let late: Promise<{ eventId: string }> | undefined;
      setHook(async () => {
        if (seen++ !== gap) return;
        setHook(() => undefined);
        late = outbox.enqueue(committed, event('a'));
        await late;
      });
      const got = await outbox.source.claim({ owner: 'r1', limit: 1, leaseMs: 60_000 });
      setHook(() => undefined);
      const a2 = await (late ?? outbox.enqueue(committed, event('a')));
      // Whatever the claim got of it goes out as a relay sends it; the rest from the next claims.
      await outbox.source.markPublished(got.map((e) => e.eventId));
      const out = [...got.map((e) => e.eventId), ...(await drain(outbox))];
      expect({ gap, out }).toEqual({ gap, out: [a2.eventId] });
      expect({ gap, stranded: (await outbox.source.stats()).unpublished }).toEqual({ gap, stranded: 0 });
    }
  });
});

describe('events that predate the aggregates collection', () => {
  it('ensureIndexes lists their aggregates, so they drain in sequence order; running it again changes nothing', async () => {
    const { mingo, outbox } = await modelOutbox();
    const legacy = (aggregateId: string, aggregateSeq: number, publishedAt: Date | null = null) => ({
      _id: `${aggregateId}-${aggregateSeq}`, aggregateType: 'order', aggregateId, aggregateSeq, eventType: 'e', payload: '{}',
      createdAt: new Date(0), publishedAt, deadLetteredAt: null, attempts: 0, availableAt: new Date(0),
    });
    mingo.documents('oncely_outbox').push(legacy('x', 1, new Date(0)), legacy('x', 2), legacy('x', 3), legacy('y', 1));
    mingo.documents('oncely_outbox_sequences').push({ _id: aggregateKey('order', 'x'), seq: 3 }, { _id: aggregateKey('order', 'y'), seq: 1 });
    mingo.documents('oncely_outbox_aggregates').length = 0;
    expect(await outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: 60_000 })).toEqual([]);
    await outbox.ensureIndexes();
    await outbox.ensureIndexes();
    expect(mingo.documents('oncely_outbox_aggregates').map((a) => a._id).sort()).toEqual([aggregateKey('order', 'x'), aggregateKey('order', 'y')]);
    expect(await drain(outbox)).toEqual(expect.arrayContaining(['x-2', 'x-3', 'y-1']));
    const batch = mingo.documents('oncely_outbox').filter((d) => d.aggregateId === 'x' && d.publishedAt !== null);
    expect(batch).toHaveLength(3);
  });
});

describe('the claim reads only what it takes', () => {
  it('the commands of a claim are the same for a backlog of 20 and of 500 events, and every event read is bounded by aggregate and limit', async () => {
    const commandsFor = async (backlog: number) => {
      const { outbox, setHook } = await modelOutbox();
      for (let i = 0; i < backlog; i++) await outbox.enqueue(committed, event(`agg-${i % 5}`));
      const sent: string[] = [];
      setHook((collection, method) => void sent.push(`${collection}.${method}`));
      const batch = await outbox.source.claim({ owner: 'r1', limit: 4, leaseMs: 60_000 });
      expect(batch).toHaveLength(4);
      return sent;
    };
    const small = await commandsFor(20);
    expect(await commandsFor(500)).toEqual(small);
    // One aggregate leased, its counter read, its next events read, each leased by a compare-and-set.
    expect(small).toEqual([
      'oncely_outbox_aggregates.findOneAndUpdate',
      'oncely_outbox_sequences.findOne',
      'oncely_outbox.aggregate',
      ...Array.from({ length: 4 }, () => 'oncely_outbox.findOneAndUpdate'),
    ]);
    expect(pendingEventsPipeline('order', 'a', 4).slice(0, 3)).toEqual([
      { $match: { publishedAt: null, aggregateType: 'order', aggregateId: 'a' } },
      { $sort: { aggregateSeq: 1 } },
      { $limit: 4 },
    ]);
  });
});

describe('a claim that fails keeps nothing', () => {
  it('when one compare-and-set fails, the events it leased go back unattempted, its aggregates are woken, and it fails with a StorageError', async () => {
    let failOn: string | undefined;
    let leases = 0;
    const { mingo, outbox } = await modelOutbox((collection, method) => {
      if (collection === 'oncely_outbox' && method === 'findOneAndUpdate' && failOn && ++leases === 3) throw new driver7.MongoNetworkError('connection reset');
    });
    for (const id of ['a', 'a', 'b', 'c']) await outbox.enqueue(committed, event(id));
    failOn = 'third lease';
    const error = await outbox.source.claim({ owner: 'r1', limit: 4, leaseMs: 60_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStorageError(error)).toBe(true);
    expect((error as Error & { operation?: string }).operation).toBe('outbox.claim');
    failOn = undefined;
    const events = mingo.documents('oncely_outbox');
    expect(events.map((d) => [d.attempts, d.leaseOwner])).toEqual(events.map(() => [0, undefined]));
    expect(mingo.documents('oncely_outbox_aggregates').every((a) => a.leaseOwner === undefined)).toBe(true);
    // Nothing waits for a lease to lapse: the next claim gets every event, at attempt 1.
    const again = await outbox.source.claim({ owner: 'r2', limit: 10, leaseMs: 60_000 });
    expect(again.map((e) => e.attempt)).toEqual([1, 1, 1, 1]);
  });
});
