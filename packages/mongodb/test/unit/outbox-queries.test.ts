import { describe, expect, it } from 'vitest';
import {
  AGGREGATE_INDEXES,
  aggregateKey,
  claimFilter,
  claimUpdate,
  deadLetterUpdate,
  enqueueCommand,
  HELD_BACK,
  leaseAggregateCommand,
  listAggregateCommand,
  markPublishedCommand,
  OUTBOX_INDEXES,
  type OutboxDocument,
  pendingEventsPipeline,
  publishedBeforeFilter,
  RELEASE_UPDATE,
  requeueCommand,
  rescheduleUpdate,
  STATS_PIPELINE,
  sequenceUnchangedCommand,
  wakeAggregateCommand,
} from '../../src/outbox/outbox-queries.js';
import { applyUpdate, at, freezeNow, matches, NOW, runPipeline } from '../support/mingo.js';

// Structure, plus evaluation by mingo (a JavaScript implementation of MongoDB's query and aggregation
// language, not MongoDB): proves which events the outbox would claim, not the server's behaviour.

freezeNow();
const run = runPipeline;
const apply = (pipeline: object[], document: object) => applyUpdate<OutboxDocument>(pipeline, document);

let n = 0;
const event = (aggregateId: string, aggregateSeq: number, extra: Partial<OutboxDocument> = {}): OutboxDocument => ({
  _id: `${aggregateId}-${aggregateSeq}`,
  aggregateType: 'order',
  aggregateId,
  aggregateSeq,
  eventType: 'order.changed.v1',
  payload: '{}',
  createdAt: at(-100_000 + n++),
  publishedAt: null,
  deadLetteredAt: null,
  attempts: 0,
  availableAt: at(-1),
  ...extra,
});

describe('outbox claim (mingo)', () => {
  it("reads an aggregate's unpublished events in sequence order, each with when it may be claimed by the server clock", () => {
    const events = [
      event('a', 1, { publishedAt: at(-5) }),
      event('a', 4),
      event('a', 2),
      event('a', 3, { leaseOwner: 'relay-2', leaseExpiresAt: at(10_000) }),
      event('a', 5, { availableAt: at(5_000) }),
      event('a', 6, { deadLetteredAt: at(-1) }),
      event('a', 7, { leaseOwner: 'relay-9', leaseExpiresAt: at(-1) }),
      event('b', 1),
    ];
    expect(run(pendingEventsPipeline('order', 'a', 10), events)).toEqual([
      { _id: 'a-2', blockedUntil: null },
      { _id: 'a-3', blockedUntil: at(10_000) },
      { _id: 'a-4', blockedUntil: null },
      { _id: 'a-5', blockedUntil: at(5_000) },
      { _id: 'a-6', blockedUntil: HELD_BACK },
      { _id: 'a-7', blockedUntil: null },
    ]);
    expect(run(pendingEventsPipeline('order', 'a', 2), events).map((doc) => doc._id)).toEqual(['a-2', 'a-3']);
  });

  it("the event read is the unpublished index's prefix: equality on its first three fields, sorted by the fourth, then limited", () => {
    const [match, sort, limit] = pendingEventsPipeline('order', 'a', 3) as [{ $match: object }, { $sort: object }, { $limit: number }];
    expect([...Object.keys(match.$match), ...Object.keys(sort.$sort)]).toEqual(Object.keys(OUTBOX_INDEXES[1].key));
    expect(Object.values(sort.$sort)).toEqual([1]);
    expect(limit.$limit).toBe(3);
  });

  it('leases the aggregate that has waited longest, ties by enqueue order, and only one that is claimable now', () => {
    const aggregate = (id: string, claimableAt: Date, order: number) => ({ _id: id, aggregateType: 'order', aggregateId: id, claimableAt, order });
    const { filter, update, options } = leaseAggregateCommand('relay-1', 30_000);
    expect(options.sort).toEqual({ claimableAt: 1, order: 1 });
    expect(AGGREGATE_INDEXES[0].key).toEqual(options.sort);
    expect(matches(filter, aggregate('a', at(0), 1))).toBe(true);
    expect(matches(filter, aggregate('a', at(1), 1))).toBe(false);
    expect(matches(filter, aggregate('a', HELD_BACK, 1))).toBe(false);
    expect(apply([...update], aggregate('a', at(-1), 1))).toMatchObject({ claimableAt: at(30_000), leaseOwner: 'relay-1', order: 1 });
  });

  it('enqueue lists an unlisted aggregate from now and leaves a listed one exactly as it is; a wake makes it claimable now', () => {
    const listed = listAggregateCommand('order', 'a', 7);
    expect(listed.filter).toEqual({ _id: aggregateKey('order', 'a') });
    expect(apply(listed.update, { _id: aggregateKey('order', 'a') })).toEqual({ _id: '["order","a"]', aggregateType: 'order', aggregateId: 'a', claimableAt: NOW, order: 7 });
    const leased = { _id: '["order","a"]', aggregateType: 'order', aggregateId: 'a', claimableAt: at(60_000), order: 3, leaseOwner: 'relay-1' };
    // Field for field and in the same order: MongoDB writes nothing for it, so no conflict with the relays.
    expect(JSON.stringify(apply(listed.update, leased))).toBe(JSON.stringify(leased));
    const held = { ...leased, claimableAt: HELD_BACK };
    expect(apply(listed.update, held)).toEqual(held);
    const woken = wakeAggregateCommand('order', 'a');
    expect(woken.upsert).toBe(true);
    expect(apply(woken.update, leased)).toEqual({ _id: '["order","a"]', aggregateType: 'order', aggregateId: 'a', claimableAt: NOW, order: 3 });
    expect(apply(woken.update, { _id: '["order","a"]' })).toMatchObject({ claimableAt: NOW, order: 0 });
  });

  it('forgetting an empty aggregate is checked by a write on its counter that matches only while the counter stands still', () => {
    const check = sequenceUnchangedCommand('["order","a"]', 4);
    expect(matches(check.filter, { _id: '["order","a"]', seq: 4 })).toBe(true);
    expect(matches(check.filter, { _id: '["order","a"]', seq: 5 })).toBe(false);
    expect(check.options.upsert).toBe(false);
    expect(apply(check.update, { _id: '["order","a"]', seq: 4 })).toEqual({ _id: '["order","a"]', seq: 4, checkedAt: NOW });
    const none = sequenceUnchangedCommand('["order","b"]', undefined);
    expect(none.options.upsert).toBe(true);
    expect(matches(none.filter, { _id: '["order","b"]', seq: 1 })).toBe(false);
  });

  it('the compare-and-set claim matches the same conditions, then leases and counts the attempt', () => {
    expect(matches(claimFilter('a-2'), event('a', 2))).toBe(true);
    expect(matches(claimFilter('b-1'), event('b', 1, { leaseOwner: 'r', leaseExpiresAt: at(1) }))).toBe(false);
    expect(matches(claimFilter('e-1'), event('e', 1, { leaseOwner: 'r', leaseExpiresAt: at(0) }))).toBe(true);
    expect(matches(claimFilter('a-1'), event('a', 1, { publishedAt: at(-1) }))).toBe(false);
    expect(matches(claimFilter('c-1'), event('c', 1, { availableAt: at(1) }))).toBe(false);
    expect(apply(claimUpdate('relay-1', 30_000), event('a', 2, { attempts: 2 }))).toMatchObject({ leaseOwner: 'relay-1', leaseExpiresAt: at(30_000), attempts: 3 });
  });
});

describe('outbox transitions (mingo)', () => {
  const leasedEvent = event('a', 2, { attempts: 2, leaseOwner: 'relay-1', leaseExpiresAt: at(1_000) });

  it('marking published stamps the server time and drops the lease; a published event is not matched again', () => {
    const { filter, update } = markPublishedCommand(['a-2']);
    expect(matches(filter, leasedEvent)).toBe(true);
    const published = apply(update, leasedEvent);
    expect(published.publishedAt).toEqual(NOW);
    expect(published.leaseOwner).toBeUndefined();
    expect(matches(filter, published)).toBe(false);
  });

  it('reschedule delays and keeps the attempt; dead-letter parks; release gives the attempt back', () => {
    expect(apply(rescheduleUpdate(2_000, 'broker down'), leasedEvent)).toMatchObject({ availableAt: at(2_000), lastError: 'broker down', attempts: 2 });
    expect(apply(deadLetterUpdate('poison'), leasedEvent)).toMatchObject({ deadLetteredAt: NOW, lastError: 'poison' });
    const released = apply(RELEASE_UPDATE, leasedEvent);
    expect(released.attempts).toBe(1);
    expect(released.leaseExpiresAt).toBeUndefined();
  });

  it('stats count unpublished and parked events and age the oldest on the server clock', () => {
    const rows = run(STATS_PIPELINE, [event('a', 1, { createdAt: at(-7_000) }), event('b', 1, { deadLetteredAt: at(-1), createdAt: at(-3_000) }), event('c', 1, { publishedAt: at(-1), createdAt: at(-99_000) })]);
    expect(rows).toEqual([{ unpublished: 2, deadLettered: 1, oldestUnpublishedAgeMs: 7_000 }]);
    expect(run(STATS_PIPELINE, [])).toEqual([]);
  });

  it('purge takes only events published at least the retention ago', () => {
    const filter = publishedBeforeFilter(60_000);
    expect(matches(filter, event('a', 1, { publishedAt: at(-60_000) }))).toBe(true);
    expect(matches(filter, event('a', 1, { publishedAt: at(-59_999) }))).toBe(false);
    expect(matches(filter, event('a', 1))).toBe(false);
  });

  it('enqueue writes a new event with server times and never matches a stored one, so a taken event id collides on _id', () => {
    const { filter, update, options } = enqueueCommand({ _id: 'e-1', aggregateType: 'order', aggregateId: '$a', aggregateSeq: 4, eventType: 'x.v1', payload: '{"$set":1}' });
    expect(filter).toEqual({ _id: 'e-1', createdAt: { $exists: false } });
    expect(options).toMatchObject({ upsert: true, returnDocument: 'after' });
    expect(apply(update, { _id: 'e-1' })).toEqual({
      _id: 'e-1',
      aggregateType: 'order',
      aggregateId: '$a',
      aggregateSeq: 4,
      eventType: 'x.v1',
      payload: '{"$set":1}',
      createdAt: NOW,
      publishedAt: null,
      deadLetteredAt: null,
      attempts: 0,
      availableAt: NOW,
    });
    // The upsert starts from the _id alone (nothing stored matches), and no stored event ever matches.
    expect(matches(filter, { _id: 'e-1' })).toBe(true);
    expect(matches(filter, event('a', 1, { _id: 'e-1' }))).toBe(false);
    expect(matches(filter, event('a', 1, { _id: 'e-1', publishedAt: at(-1) }))).toBe(false);
  });

  it('requeue takes only unpublished dead letters and makes them claimable from attempt 1', () => {
    const { filter, update } = requeueCommand(['a-1', 'b-1', 'c-1', 'd-1']);
    const parked = event('a', 1, { deadLetteredAt: at(-10), attempts: 10, availableAt: at(-5_000), lastError: 'poison' });
    expect(matches(filter, parked)).toBe(true);
    expect(matches(filter, event('b', 1))).toBe(false);
    expect(matches(filter, event('c', 1, { leaseOwner: 'r', leaseExpiresAt: at(1_000), attempts: 1 }))).toBe(false);
    expect(matches(filter, event('d', 1, { deadLetteredAt: at(-10), publishedAt: at(-1) }))).toBe(false);
    expect(matches(filter, event('e', 1, { deadLetteredAt: at(-10) }))).toBe(false);
    const requeued = apply(update, parked);
    expect(requeued).toMatchObject({ deadLetteredAt: null, attempts: 0, availableAt: NOW, lastError: 'poison' });
    expect(matches(claimFilter('a-1'), requeued)).toBe(true);
  });

  it('a unique index keeps one event per aggregate sequence', () => {
    expect(OUTBOX_INDEXES[0]).toEqual({ key: { aggregateType: 1, aggregateId: 1, aggregateSeq: 1 }, options: { name: 'oncely_outbox_aggregate_seq', unique: true } });
  });
});
