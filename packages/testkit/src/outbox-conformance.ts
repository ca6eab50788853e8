import type { ClaimedEvent, NewOutboxEvent, Outbox, OutboxEvent } from '@oncely/core/adapter';
import { expectCode } from './expect-code.js';
import { sleep, type TestRunner, uniqueKey } from './runner.js';

/**
 * An outbox under test: the writer, the transactions its `enqueue` writes in, and a business write
 * of the caller's own, so the suite can see the event and the caller's writes commit together.
 */
export interface OutboxWriterUnderTest<Tx> {
  readonly outbox: Outbox<Tx>;
  /**
   * Runs `work` in a transaction of the outbox's database: commits when it resolves, rolls back when
   * it throws and rethrows that error (MongoDB: `session.withTransaction`, which retries write
   * conflicts; PostgreSQL: BEGIN … COMMIT on one connection).
   */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** Writes the caller's own row `id` in `tx` (an insert into a business table). */
  write(tx: Tx, id: string): Promise<void>;
  /** True when the row `id` was committed. */
  read(id: string): Promise<boolean>;
  close?(): Promise<void>;
}

/** Options of {@link runOutboxConformance}. */
export interface OutboxConformanceOptions<Tx> {
  /** Names the suite, e.g. `postgres outbox (pg.Pool)`. */
  readonly name: string;
  /** An empty outbox with storage of its own (table, collection): claims see only this test's events. */
  readonly createOutbox: () => Promise<OutboxWriterUnderTest<Tx>>;
  /**
   * Whether the suite may read, or run a second transaction, while a transaction is open (default
   * true). `false` for a single connection (a `pg.Client`, PGlite), where that would wait for
   * itself: the clauses that need it (`outbox.enqueue.in-transaction`'s read before commit,
   * `outbox.enqueue.sequence-order`) are then left to a pooled run.
   */
  readonly concurrentTransactions?: boolean;
  /** Concurrent transactions enqueueing into one aggregate (default 5). */
  readonly raceSize?: number;
  /** How long a transaction is held open while another waits behind it (default 200 ms). */
  readonly holdMs?: number;
  /** Per-test timeout in ms (default 30 000). */
  readonly timeoutMs?: number;
}

const LONG = 600_000;

/**
 * The writer side of the outbox contract (`Outbox<Tx>` in `@oncely/core/adapter`) as tests,
 * runner-agnostic like the rest of `@oncely/testkit`: enqueue in the caller's transaction, rollback
 * leaves nothing, per-aggregate sequences (automatic, explicit, concurrent), duplicate event ids,
 * validation before storage, and requeue of dead letters. Each test is named for its clause id.
 * The relay side is {@link runOutboxSourceConformance}'s.
 */
export function runOutboxConformance<Tx>(runner: TestRunner, options: OutboxConformanceOptions<Tx>): void {
  const { describe, it, expect } = runner;
  const timeout = options.timeoutMs ?? 30_000;
  const raceSize = options.raceSize ?? 5;
  const holdMs = options.holdMs ?? 200;
  const concurrent = options.concurrentTransactions ?? true;

  const eventOf = (aggregateId: string, fields: Partial<NewOutboxEvent> = {}): NewOutboxEvent => ({
    aggregateType: 'order',
    aggregateId,
    eventType: 'order.updated.v1',
    payload: { note: 'naïve café ✓ 😀', nested: [1, 2.5, null, true] },
    ...fields,
  });
  const aggregate = () => uniqueKey('ord');

  const test = (clause: string, name: string, body: (h: OutboxWriterUnderTest<Tx>) => Promise<void>) =>
    it(
      `${clause}: ${name}`,
      async () => {
        const h = await options.createOutbox();
        try {
          await body(h);
        } finally {
          await h.close?.();
        }
      },
      timeout,
    );

  const committed = <P>(h: OutboxWriterUnderTest<Tx>, event: NewOutboxEvent<P>) =>
    h.transaction((tx) => h.outbox.enqueue(tx, event));
  /** Claims every claimable head for a fresh relay. */
  const claimAll = (h: OutboxWriterUnderTest<Tx>) => h.outbox.source.claim({ owner: uniqueKey('relay'), limit: 100, leaseMs: LONG });
  /** Publishes the aggregate's events one head at a time and returns their sequences in claim order. */
  async function drain(h: OutboxWriterUnderTest<Tx>): Promise<ClaimedEvent[]> {
    const seen: ClaimedEvent[] = [];
    for (let round = 0; round < 100; round++) {
      const claimed = await claimAll(h);
      if (claimed.length === 0) break;
      seen.push(...claimed);
      await h.outbox.source.markPublished(claimed.map((event) => event.eventId));
    }
    return seen;
  }
  const failWith = (error: Error) => {
    throw error;
  };

  describe(`${options.name}: outbox writer contract`, () => {
    test('outbox.enqueue.in-transaction', "an event commits with the caller's writes and is not claimable before", async (h) => {
      const row = uniqueKey('row');
      const event = await h.transaction(async (tx) => {
        await h.write(tx, row);
        const enqueued = await h.outbox.enqueue(tx, eventOf(aggregate()));
        // A second connection must not see the event before the commit.
        if (concurrent) expect((await claimAll(h)).length).toBe(0);
        return enqueued;
      });
      expect(await h.read(row)).toBe(true);
      expect((await claimAll(h)).map((claimed) => claimed.eventId)).toEqual([event.eventId]);
    });

    test('outbox.enqueue.rollback', 'a rolled-back transaction leaves no event, no row and no used sequence', async (h) => {
      const [row, a] = [uniqueKey('row'), aggregate()];
      const boom = new Error('business rule failed');
      const failure = await h
        .transaction(async (tx) => {
          await h.write(tx, row);
          await h.outbox.enqueue(tx, eventOf(a));
          await h.outbox.enqueue(tx, eventOf(a));
          failWith(boom);
        })
        .catch((error: unknown) => error);
      expect(failure).toBe(boom);
      expect(await h.read(row)).toBe(false);
      expect((await claimAll(h)).length).toBe(0);
      expect((await committed(h, eventOf(a))).aggregateSeq).toBe(1);
    });

    test('outbox.enqueue.returns', 'enqueue resolves the event as stored: id, sequence, a copy of the payload, createdAt', async (h) => {
      const given = await committed(h, eventOf(aggregate(), { eventId: uniqueKey('evt') }));
      const drawn = await committed(h, eventOf(aggregate()));
      expect(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(drawn.eventId)).toBe(true);
      (given.payload as { note: string }).note = 'changed by the caller';
      const claimed = await claimAll(h);
      for (const event of [given, drawn] as OutboxEvent[]) {
        const stored = claimed.find((candidate) => candidate.eventId === event.eventId);
        expect(stored?.aggregateSeq).toBe(event.aggregateSeq);
        expect(stored?.createdAt.getTime()).toBe(event.createdAt.getTime());
        expect(stored?.payload).toEqual(eventOf('x').payload);
      }
    });

    test('outbox.enqueue.sequence', 'each aggregate numbers its events 1, 2, 3… across transactions', async (h) => {
      const [a, b] = [aggregate(), aggregate()];
      const first = await h.transaction(async (tx) => [
        await h.outbox.enqueue(tx, eventOf(a)),
        await h.outbox.enqueue(tx, eventOf(a)),
        await h.outbox.enqueue(tx, eventOf(b)),
      ]);
      const third = await committed(h, eventOf(a));
      expect([...first, third].map((event) => event.aggregateSeq)).toEqual([1, 2, 1, 3]);
      expect((await drain(h)).filter((event) => event.aggregateId === a).map((event) => event.aggregateSeq)).toEqual([1, 2, 3]);
    });

    if (concurrent) {
      test('outbox.enqueue.sequence-order', 'while sequence n is uncommitted, no later event of its aggregate commits', async (h) => {
        const a = aggregate();
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let enqueued!: () => void;
        const firstIn = new Promise<void>((resolve) => (enqueued = resolve));
        const first = h.transaction(async (tx) => {
          const event = await h.outbox.enqueue(tx, eventOf(a, { payload: { n: 1 } }));
          enqueued();
          await gate;
          return event;
        });
        await firstIn;
        const second = committed(h, eventOf(a, { payload: { n: 2 } }));
        await sleep(holdMs);
        // Neither event may be claimable yet: the second must not have committed ahead of the first.
        expect((await claimAll(h)).length).toBe(0);
        release();
        const events = await Promise.all([first, second]);
        expect(events.map((event) => event.aggregateSeq)).toEqual([1, 2]);
        expect((await drain(h)).map((event) => event.payload)).toEqual([{ n: 1 }, { n: 2 }]);
      });

      test('outbox.enqueue.sequence-order', `${raceSize} concurrent transactions on one aggregate get distinct sequences, published in order`, async (h) => {
        const a = aggregate();
        const events = await Promise.all(Array.from({ length: raceSize }, (_, n) => committed(h, eventOf(a, { payload: { n } }))));
        const sequences = events.map((event) => event.aggregateSeq).sort((x, y) => x - y);
        expect(sequences).toEqual(Array.from({ length: raceSize }, (_, n) => n + 1));
        const published = await drain(h);
        expect(published.map((event) => event.aggregateSeq)).toEqual(sequences);
      });
    }

    test('outbox.enqueue.explicit-sequence', "a caller's higher aggregateSeq is kept and later events continue from it", async (h) => {
      const a = aggregate();
      expect((await committed(h, eventOf(a, { aggregateSeq: 5 }))).aggregateSeq).toBe(5);
      expect((await committed(h, eventOf(a))).aggregateSeq).toBe(6);
      expect((await committed(h, eventOf(a, { aggregateSeq: 10 }))).aggregateSeq).toBe(10);
      expect((await drain(h)).map((event) => event.aggregateSeq)).toEqual([5, 6, 10]);
    });

    test('outbox.enqueue.sequence-conflict', 'an aggregateSeq not above the last is refused and nothing is written', async (h) => {
      const [a, row] = [aggregate(), uniqueKey('row')];
      await committed(h, eventOf(a));
      await committed(h, eventOf(a));
      for (const seq of [1, 2]) {
        await expectCode(
          h.transaction(async (tx) => {
            await h.write(tx, row);
            await h.outbox.enqueue(tx, eventOf(a, { aggregateSeq: seq }));
          }),
          'outbox_sequence_conflict',
          'outbox.enqueue.sequence-conflict',
        );
      }
      expect(await h.read(row)).toBe(false);
      expect((await committed(h, eventOf(a))).aggregateSeq).toBe(3);
    });

    test('outbox.enqueue.duplicate', 'an eventId already in the outbox is refused; the stored event and the sequence stay', async (h) => {
      const [a, row, eventId] = [aggregate(), uniqueKey('row'), uniqueKey('evt')];
      const original = await committed(h, eventOf(a, { eventId, payload: { version: 'first' } }));
      await expectCode(
        h.transaction(async (tx) => {
          await h.write(tx, row);
          await h.outbox.enqueue(tx, eventOf(a, { eventId, payload: { version: 'second' } }));
        }),
        'duplicate_event',
        'outbox.enqueue.duplicate',
      );
      expect(await h.read(row)).toBe(false);
      const [stored] = await claimAll(h);
      expect([stored?.eventId, stored?.aggregateSeq, stored?.payload]).toEqual([original.eventId, 1, { version: 'first' }]);
      await h.outbox.source.markPublished([eventId]);
      expect((await committed(h, eventOf(a))).aggregateSeq).toBe(2);
    });

    test('outbox.enqueue.duplicate', 'the same eventId twice in one transaction is refused and the transaction rolls back', async (h) => {
      const [a, eventId] = [aggregate(), uniqueKey('evt')];
      await expectCode(
        h.transaction(async (tx) => {
          await h.outbox.enqueue(tx, eventOf(a, { eventId }));
          await h.outbox.enqueue(tx, eventOf(a, { eventId }));
        }),
        'duplicate_event',
        'outbox.enqueue.duplicate',
      );
      expect((await claimAll(h)).length).toBe(0);
      expect((await committed(h, eventOf(a, { eventId }))).aggregateSeq).toBe(1);
    });

    test('outbox.enqueue.validates', 'a malformed event is refused before storage and the transaction stays usable', async (h) => {
      const [a, row] = [aggregate(), uniqueKey('row')];
      const bad: unknown[] = [
        undefined,
        { ...eventOf(a), aggregateType: '' },
        { ...eventOf(a), eventId: 'line\nbreak' },
        { ...eventOf(a), aggregateSeq: 0 },
        { ...eventOf(a), payload: { amount: Number.NaN } },
      ];
      const good = await h.transaction(async (tx) => {
        await h.write(tx, row);
        for (const event of bad) await expectCode(h.outbox.enqueue(tx, event as NewOutboxEvent), 'invalid_event', 'outbox.enqueue.validates');
        return h.outbox.enqueue(tx, eventOf(a));
      });
      expect(await h.read(row)).toBe(true);
      expect((await claimAll(h)).map((event) => [event.eventId, event.aggregateSeq])).toEqual([[good.eventId, 1]]);
    });

    test('outbox.enqueue.needs-transaction', 'enqueue without a transaction handle is invalid_state and writes nothing', async (h) => {
      for (const tx of [undefined, null]) {
        await expectCode(h.outbox.enqueue(tx as Tx, eventOf(aggregate())), 'invalid_state', 'outbox.enqueue.needs-transaction');
      }
      expect((await claimAll(h)).length).toBe(0);
    });

    test('outbox.requeue.dead-letters', 'requeue makes a dead letter claimable again from attempt 1', async (h) => {
      const event = await committed(h, eventOf(aggregate()));
      await h.outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: LONG });
      expect(await h.outbox.source.deadLetter({ owner: 'r1', letters: [{ eventId: event.eventId, error: 'poison' }] })).toBe(1);
      expect((await claimAll(h)).length).toBe(0);
      expect(await h.outbox.requeue([event.eventId])).toBe(1);
      const again = await claimAll(h);
      expect(again.map((claimed) => [claimed.eventId, claimed.attempt])).toEqual([[event.eventId, 1]]);
      expect((await h.outbox.source.stats()).deadLettered).toBe(0);
    });

    test('outbox.requeue.only-dead-letters', 'requeue leaves pending, leased, published and unknown events alone', async (h) => {
      const [pending, leased, published] = [
        await committed(h, eventOf(aggregate())),
        await committed(h, eventOf(aggregate())),
        await committed(h, eventOf(aggregate())),
      ];
      const claimed = await h.outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: LONG });
      expect(claimed.length).toBe(3);
      await h.outbox.source.markPublished([published.eventId]);
      await h.outbox.source.release({ owner: 'r1', eventIds: [pending.eventId] });
      const ids = [pending.eventId, leased.eventId, published.eventId, uniqueKey('absent')];
      expect(await h.outbox.requeue(ids)).toBe(0);
      // The lease of r1 still holds: only the released event is claimable, still at attempt 1.
      expect((await claimAll(h)).map((event) => [event.eventId, event.attempt])).toEqual([[pending.eventId, 1]]);
    });
  });
}
