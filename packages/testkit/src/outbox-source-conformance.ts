import type { ClaimedEvent, NewOutboxEvent, OutboxEvent, OutboxSource } from '@oncely/core/adapter';
import { resourceTest } from './clause.js';
import { sleep, type TestRunner } from './runner.js';

/** One event's row, read behind the source's back (Auth.js style): what really reached storage. */
export interface RawOutboxRow {
  readonly published: boolean;
  readonly deadLettered: boolean;
  readonly attempts: number;
  readonly leaseOwner: string | undefined;
}

/** An outbox under test: its source, a way to enqueue (each in its own committed transaction), and a raw read. */
export interface OutboxUnderTest {
  readonly source: OutboxSource;
  enqueue(event: NewOutboxEvent): Promise<OutboxEvent>;
  inspect(eventId: string): Promise<RawOutboxRow | undefined>;
  close?(): Promise<void>;
}

/** Options of {@link runOutboxSourceConformance}. */
export interface SourceConformanceOptions {
  /** Names the suite, e.g. `postgres outbox (pg.Pool)`. */
  readonly name: string;
  /** An empty outbox with storage of its own (table, collection): the gauges count every event in it. */
  readonly createOutbox: () => Promise<OutboxUnderTest>;
  /** Lets the storage clock move (default: real sleep, right for server clocks). */
  readonly advanceTime?: (ms: number) => Promise<void>;
  /** Lease and delay used by the expiry tests (default 300 ms). */
  readonly shortMs?: number;
  /** Relays claiming at once in the race test (default 8). */
  readonly raceSize?: number;
  /** Per-test timeout in ms (default 30 000). */
  readonly timeoutMs?: number;
}

const LONG = 600_000;
let aggregates = 0;

/**
 * The claim contract of an {@link OutboxSource} as tests, runner-agnostic like `@oncely/testkit`: each
 * aggregate's unpublished events from the oldest, in sequence order; leases that keep other relays off until they
 * lapse; attempts counted per claim; owner-fenced reschedule, dead letter and release; gauges; purge;
 * and a race of concurrent relays that must never share an event or an aggregate.
 */
export function runOutboxSourceConformance(runner: TestRunner, options: SourceConformanceOptions): void {
  const { describe, it, expect } = runner;
  const short = options.shortMs ?? 300;
  const advance = options.advanceTime ?? sleep;
  const timeout = options.timeoutMs ?? 30_000;
  const raceSize = options.raceSize ?? 8;

  const newAggregate = () => `agg-${++aggregates}-${Math.random().toString(36).slice(2, 8)}`;
  const eventOf = (aggregateId: string, n = 1): NewOutboxEvent => ({
    aggregateType: 'account',
    aggregateId,
    eventType: 'account.credited.v1',
    payload: { n, note: 'naïve café ✓ 😀', nested: [1, 2.5, null, true] },
  });
  const ids = (events: readonly { eventId: string }[]) => events.map((event) => event.eventId).sort();

  /** Runs `body` on a fresh outbox and closes it whatever happens. */
  const test = resourceTest(it, timeout, options.createOutbox, async (outbox) => outbox.close?.());

  describe(`${options.name}: outbox source contract`, () => {
    test(['outbox-source.enqueue.sequence'], 'enqueue numbers each aggregate 1, 2, 3… and keeps the payload', async (outbox) => {
      const a = newAggregate();
      const first = await outbox.enqueue(eventOf(a, 1));
      const second = await outbox.enqueue(eventOf(a, 2));
      const other = await outbox.enqueue(eventOf(newAggregate()));
      expect([first.aggregateSeq, second.aggregateSeq, other.aggregateSeq]).toEqual([1, 2, 1]);
      const [claimed] = await outbox.source.claim({ owner: 'r1', limit: 1, leaseMs: LONG });
      expect(claimed?.payload).toEqual(eventOf(a, 1).payload);
      expect(claimed?.createdAt.getTime()).toBe(first.createdAt.getTime());
    });

    test(['outbox-source.claim.oldest'], "claims each aggregate's unpublished events from the oldest, in sequence order, with attempt 1", async (outbox) => {
      const [a, b] = [newAggregate(), newAggregate()];
      const a1 = await outbox.enqueue(eventOf(a, 1));
      const a2 = await outbox.enqueue(eventOf(a, 2));
      const b1 = await outbox.enqueue(eventOf(b, 1));
      const claimed = await outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: LONG });
      expect(ids(claimed)).toEqual(ids([a1, a2, b1]));
      expect(claimed.filter((event) => event.aggregateId === a).map((event) => event.eventId)).toEqual([a1.eventId, a2.eventId]);
      expect(claimed.map((event) => event.attempt)).toEqual([1, 1, 1]);
      expect((await outbox.inspect(a2.eventId))?.leaseOwner).toBe('r1');
    });

    test(['outbox-source.claim.batch'], "a hot aggregate's next events come in one claim, up to limit, and no other relay gets any of its events meanwhile", async (outbox) => {
      const a = newAggregate();
      const events = [];
      for (let n = 1; n <= 5; n++) events.push(await outbox.enqueue(eventOf(a, n)));
      const first = await outbox.source.claim({ owner: 'r1', limit: 3, leaseMs: LONG });
      expect(first.map((event) => event.aggregateSeq)).toEqual([1, 2, 3]);
      expect((await outbox.source.claim({ owner: 'r2', limit: 10, leaseMs: LONG })).length).toBe(0);
      await outbox.source.markPublished(first.map((event) => event.eventId));
      const rest = await outbox.source.claim({ owner: 'r2', limit: 10, leaseMs: LONG });
      expect(rest.map((event) => event.eventId)).toEqual([events[3]!.eventId, events[4]!.eventId]);
    });

    test(['outbox-source.claim.limit'], 'claims at most limit events', async (outbox) => {
      for (let i = 0; i < 5; i++) await outbox.enqueue(eventOf(newAggregate()));
      expect((await outbox.source.claim({ owner: 'r1', limit: 2, leaseMs: LONG })).length).toBe(2);
      expect((await outbox.source.claim({ owner: 'r2', limit: 10, leaseMs: LONG })).length).toBe(3);
    });

    test(['outbox-source.claim.lease', 'outbox-source.fenced'], 'a leased event is not claimable until its lease lapses; the next claim is attempt 2', async (outbox) => {
      const event = await outbox.enqueue(eventOf(newAggregate()));
      await outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: short });
      expect((await outbox.source.claim({ owner: 'r2', limit: 10, leaseMs: LONG })).length).toBe(0);
      await advance(short + 50);
      const retaken = await outbox.source.claim({ owner: 'r2', limit: 10, leaseMs: LONG });
      expect(retaken.map((e) => [e.eventId, e.attempt])).toEqual([[event.eventId, 2]]);
      // The first relay lost its lease: its writes are refused.
      expect(await outbox.source.reschedule({ owner: 'r1', retries: [{ eventId: event.eventId, delayMs: 0, error: 'x' }] })).toBe(0);
      expect(await outbox.source.release({ owner: 'r1', eventIds: [event.eventId] })).toBe(0);
      expect(await outbox.source.deadLetter({ owner: 'r1', letters: [{ eventId: event.eventId, error: 'x' }] })).toBe(0);
      expect((await outbox.inspect(event.eventId))?.leaseOwner).toBe('r2');
    });

    test(['outbox-source.mark-published'], 'markPublished frees the next event of the aggregate, and marking again changes nothing', async (outbox) => {
      const a = newAggregate();
      const first = await outbox.enqueue(eventOf(a, 1));
      const second = await outbox.enqueue(eventOf(a, 2));
      await outbox.source.claim({ owner: 'r1', limit: 1, leaseMs: LONG });
      await outbox.source.markPublished([first.eventId]);
      await outbox.source.markPublished([first.eventId]);
      expect(await outbox.inspect(first.eventId)).toEqual({ published: true, deadLettered: false, attempts: 1, leaseOwner: undefined });
      expect(ids(await outbox.source.claim({ owner: 'r2', limit: 10, leaseMs: LONG }))).toEqual([second.eventId]);
    });

    test(['outbox-source.reschedule'], 'reschedule ends the lease and holds the event back for its delay', async (outbox) => {
      const event = await outbox.enqueue(eventOf(newAggregate()));
      await outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: LONG });
      expect(await outbox.source.reschedule({ owner: 'r1', retries: [{ eventId: event.eventId, delayMs: short, error: 'broker down' }] })).toBe(1);
      expect((await outbox.inspect(event.eventId))?.leaseOwner).toBeUndefined();
      expect((await outbox.source.claim({ owner: 'r2', limit: 10, leaseMs: LONG })).length).toBe(0);
      await advance(short + 50);
      const [again] = await outbox.source.claim({ owner: 'r2', limit: 10, leaseMs: LONG });
      expect(again?.attempt).toBe(2);
    });

    test(['outbox-source.dead-letter'], 'a dead letter is never claimed and holds back the later events of its aggregate only', async (outbox) => {
      const [a, b] = [newAggregate(), newAggregate()];
      const poison = await outbox.enqueue(eventOf(a, 1));
      await outbox.enqueue(eventOf(a, 2));
      const fine = await outbox.enqueue(eventOf(b, 1));
      await outbox.source.claim({ owner: 'r1', limit: 1, leaseMs: LONG });
      expect(await outbox.source.deadLetter({ owner: 'r1', letters: [{ eventId: poison.eventId, error: 'too big' }] })).toBe(1);
      expect(await outbox.inspect(poison.eventId)).toEqual({ published: false, deadLettered: true, attempts: 1, leaseOwner: undefined });
      expect(ids(await outbox.source.claim({ owner: 'r2', limit: 10, leaseMs: LONG }))).toEqual([fine.eventId]);
      const stats = await outbox.source.stats();
      expect([stats.unpublished, stats.deadLettered]).toEqual([3, 1]);
    });

    test(['outbox-source.release'], 'release hands events back unattempted, only for their lease owner', async (outbox) => {
      const event = await outbox.enqueue(eventOf(newAggregate()));
      await outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: LONG });
      expect(await outbox.source.release({ owner: 'someone-else', eventIds: [event.eventId] })).toBe(0);
      expect(await outbox.source.release({ owner: 'r1', eventIds: [event.eventId] })).toBe(1);
      expect(await outbox.inspect(event.eventId)).toEqual({ published: false, deadLettered: false, attempts: 0, leaseOwner: undefined });
      const [again] = await outbox.source.claim({ owner: 'r2', limit: 10, leaseMs: LONG });
      expect(again?.attempt).toBe(1);
    });

    test(['outbox-source.stats'], 'stats report the unpublished count and the age of the oldest', async (outbox) => {
      expect(await outbox.source.stats()).toEqual({ unpublished: 0, oldestUnpublishedAgeMs: 0, deadLettered: 0 });
      const first = await outbox.enqueue(eventOf(newAggregate()));
      await outbox.enqueue(eventOf(newAggregate()));
      await advance(short);
      const stats = await outbox.source.stats();
      expect(stats.unpublished).toBe(2);
      expect(stats.oldestUnpublishedAgeMs).toBeGreaterThanOrEqual(short - 5);
      await outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: LONG });
      await outbox.source.markPublished([first.eventId]);
      expect((await outbox.source.stats()).unpublished).toBe(1);
    });

    test(['outbox-source.purge'], 'purgePublished deletes published events past the retention only, at most limit', async (outbox) => {
      const events = [];
      for (let i = 0; i < 3; i++) events.push(await outbox.enqueue(eventOf(newAggregate())));
      const pending = await outbox.enqueue(eventOf(newAggregate()));
      const claimed = await outbox.source.claim({ owner: 'r1', limit: 3, leaseMs: LONG });
      expect(ids(claimed)).toEqual(ids(events));
      await outbox.source.markPublished(events.map((event) => event.eventId));
      expect(await outbox.source.purgePublished({ olderThanMs: LONG, limit: 10 })).toBe(0);
      await advance(short);
      expect(await outbox.source.purgePublished({ olderThanMs: short / 2, limit: 2 })).toBe(2);
      expect(await outbox.source.purgePublished({ olderThanMs: short / 2, limit: 10 })).toBe(1);
      for (const event of events) expect(await outbox.inspect(event.eventId)).toBeUndefined();
      expect((await outbox.inspect(pending.eventId))?.published).toBe(false);
    });

    test(['outbox-source.claim.race'], 'relays claiming at once never share an event or an aggregate, and each aggregate goes out in order', async (outbox) => {
      const aggregatesInRace = Array.from({ length: 6 }, newAggregate);
      for (let n = 1; n <= 4; n++) for (const a of aggregatesInRace) await outbox.enqueue(eventOf(a, n));
      const published: ClaimedEvent[] = [];
      for (let round = 0; round < 20; round++) {
        const batches = await Promise.all(
          Array.from({ length: raceSize }, (_, r) => outbox.source.claim({ owner: `racer-${r}`, limit: 2, leaseMs: LONG })),
        );
        const claimed = batches.flat();
        if (claimed.length === 0) break;
        expect(new Set(claimed.map((event) => event.eventId)).size).toBe(claimed.length);
        // An aggregate's events of one round all went to one relay.
        const owners = new Map<string, number>();
        batches.forEach((batch, r) => {
          for (const event of batch) {
            expect(owners.get(event.aggregateId) ?? r).toBe(r);
            owners.set(event.aggregateId, r);
          }
        });
        await Promise.all(batches.map((batch) => outbox.source.markPublished(batch.map((event) => event.eventId))));
        published.push(...claimed);
      }
      expect(published.length).toBe(24);
      for (const a of aggregatesInRace) {
        expect(published.filter((event) => event.aggregateId === a).map((event) => event.aggregateSeq)).toEqual([1, 2, 3, 4]);
      }
    });
  });
}
