import { type Clock, type ManualClock, manualClock } from '@oncely/core';
import type { Inbox, InboxEvent, InboxInput } from '@oncely/core/adapter';
import { expectCode } from './expect-code.js';
import { sleep, type TestRunner, uniqueKey } from './runner.js';

/** What {@link InboxConformanceOptions.createInbox} must pass on to the inbox it creates. */
export interface InboxSetup {
  /** The inbox's `onEvent`. */
  readonly onEvent: (event: InboxEvent) => void;
  /** The inbox's clock, which stamps its events. */
  readonly clock: Clock;
}

/**
 * An inbox under test: the inbox, the transactions its `process` writes in, and the consumer's own
 * business effect, so the suite can count how often an event was really applied.
 */
export interface InboxUnderTest<Tx> {
  readonly inbox: Inbox<Tx>;
  /** Runs `work` in a transaction: commits when it resolves, rolls back when it throws and rethrows that error. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** Applies the consumer's effect for `id` in `tx` once more (a counter increment or an inserted row). */
  apply(tx: Tx, id: string): Promise<void>;
  /** How many applications of `id` were committed. */
  applied(id: string): Promise<number>;
  close?(): Promise<void>;
}

/** Options of {@link runInboxConformance}. */
export interface InboxConformanceOptions<Tx> {
  /** Names the suite, e.g. `postgres inbox (pg.Pool)`. */
  readonly name: string;
  /** An inbox with storage of its own (table, collection), created with the given `onEvent` and `clock`. */
  readonly createInbox: (setup: InboxSetup) => Promise<InboxUnderTest<Tx>>;
  /**
   * Whether concurrent transactions are possible (default true); `false` for a single connection
   * (a `pg.Client`, PGlite), where `inbox.process.concurrent` is left to a pooled run.
   */
  readonly concurrentTransactions?: boolean;
  /** Concurrent deliveries of one event (default 8). */
  readonly raceSize?: number;
  /**
   * Lets the storage clock move for the purge test (default: real sleep, right for server clocks).
   * The suite moves the inbox's own clock (the `clock` it was created with) as well, so an inbox
   * that judges time by that clock passes `advanceTime: async () => undefined`.
   */
  readonly advanceTime?: (ms: number) => Promise<void>;
  /** Age that separates old records from new ones in the purge test (default 300 ms). */
  readonly shortMs?: number;
  /** Per-test timeout in ms (default 30 000). */
  readonly timeoutMs?: number;
}

/**
 * The inbox contract (`Inbox<Tx>` in `@oncely/core/adapter`) as tests: a new pair applies the event
 * in the caller's transaction, a duplicate applies nothing, a rollback forgets the pair, concurrent
 * deliveries apply once, consumers deduplicate on their own, validation before storage, duplicate
 * events reported with the inbox's clock, `run` commits and rolls back, and a bounded purge.
 * Each test is named for its clause id.
 */
export function runInboxConformance<Tx>(runner: TestRunner, options: InboxConformanceOptions<Tx>): void {
  const { describe, it, expect } = runner;
  const timeout = options.timeoutMs ?? 30_000;
  const raceSize = options.raceSize ?? 8;
  const short = options.shortMs ?? 300;
  const advance = options.advanceTime ?? sleep;
  const concurrent = options.concurrentTransactions ?? true;

  const test = (clause: string, name: string, body: (h: InboxUnderTest<Tx>, events: InboxEvent[], clock: ManualClock) => Promise<void>) =>
    it(
      `${clause}: ${name}`,
      async () => {
        const events: InboxEvent[] = [];
        const clock = manualClock(Date.UTC(2026, 0, 1, 12));
        const h = await options.createInbox({ onEvent: (event) => events.push(event), clock });
        try {
          await body(h, events, clock);
        } finally {
          await h.close?.();
        }
      },
      timeout,
    );

  const delivery = (consumer = 'billing'): InboxInput => ({ consumer, eventId: uniqueKey('evt') });
  /** Delivers `input` in a transaction of its own, applying the effect if the inbox says so. */
  const deliver = (h: InboxUnderTest<Tx>, input: InboxInput) =>
    h.transaction((tx) => h.inbox.process(tx, input, (inner) => h.apply(inner, input.eventId)));

  describe(`${options.name}: inbox contract`, () => {
    test('inbox.process.new', "a new pair runs fn in the caller's transaction and commits with it", async (h) => {
      const input = delivery();
      const handles: unknown[] = [];
      const outcome = await h.transaction(async (tx) => {
        const result = await h.inbox.process(tx, input, async (inner) => {
          handles.push(inner === tx);
          await h.apply(inner, input.eventId);
        });
        // Not committed yet: the effect is the caller's to commit.
        return result;
      });
      expect(outcome).toBe('processed');
      expect(handles).toEqual([true]);
      expect(await h.applied(input.eventId)).toBe(1);
    });

    test('inbox.process.duplicate', 'a recorded pair resolves duplicate and fn does not run', async (h) => {
      const input = delivery();
      expect(await deliver(h, input)).toBe('processed');
      let ran = 0;
      const again = await h.transaction((tx) => h.inbox.process(tx, input, async () => void ran++));
      expect([again, ran]).toEqual(['duplicate', 0]);
      expect(await deliver(h, input)).toBe('duplicate');
      expect(await h.applied(input.eventId)).toBe(1);
    });

    test('inbox.process.rollback', "a transaction rolled back after processing forgets the pair: the redelivery applies", async (h) => {
      const input = delivery();
      const boom = new Error('the caller rolled back');
      const failure = await h
        .transaction(async (tx) => {
          expect(await h.inbox.process(tx, input, (inner) => h.apply(inner, input.eventId))).toBe('processed');
          throw boom;
        })
        .catch((error: unknown) => error);
      expect(failure).toBe(boom);
      expect(await h.applied(input.eventId)).toBe(0);
      expect(await deliver(h, input)).toBe('processed');
      expect(await h.applied(input.eventId)).toBe(1);
    });

    if (concurrent) {
      test('inbox.process.concurrent', `${raceSize} concurrent deliveries of one event apply it once`, async (h) => {
        const input = delivery();
        const outcomes = await Promise.all(Array.from({ length: raceSize }, () => deliver(h, input)));
        expect(outcomes.filter((outcome) => outcome === 'processed').length).toBe(1);
        expect(outcomes.filter((outcome) => outcome === 'duplicate').length).toBe(raceSize - 1);
        expect(await h.applied(input.eventId)).toBe(1);
      });
    }

    test('inbox.process.per-consumer', 'each consumer applies an event once, on its own', async (h) => {
      const { eventId } = delivery();
      expect(await deliver(h, { consumer: 'billing', eventId })).toBe('processed');
      expect(await deliver(h, { consumer: 'shipping', eventId })).toBe('processed');
      expect(await deliver(h, { consumer: 'shipping', eventId })).toBe('duplicate');
      expect(await h.applied(eventId)).toBe(2);
    });

    test('inbox.process.validates', 'a malformed consumer or event id is refused before storage; the transaction stays usable', async (h) => {
      const good = delivery();
      const bad: unknown[] = [
        undefined,
        { consumer: '', eventId: 'e' },
        { consumer: 'billing', eventId: '' },
        { consumer: 'billing', eventId: 'line\nbreak' },
        { consumer: 'x'.repeat(256), eventId: 'e' },
      ];
      let ran = 0;
      const outcome = await h.transaction(async (tx) => {
        for (const input of bad) {
          await expectCode(h.inbox.process(tx, input as InboxInput, async () => void ran++), 'invalid_event', 'inbox.process.validates');
        }
        return h.inbox.process(tx, good, (inner) => h.apply(inner, good.eventId));
      });
      expect([outcome, ran, await h.applied(good.eventId)]).toEqual(['processed', 0, 1]);
    });

    test('inbox.process.needs-transaction', 'process without a transaction handle is invalid_state and runs nothing', async (h) => {
      let ran = 0;
      for (const tx of [undefined, null]) {
        await expectCode(h.inbox.process(tx as Tx, delivery(), async () => void ran++), 'invalid_state', 'inbox.process.needs-transaction');
      }
      expect(ran).toBe(0);
    });

    test('inbox.process.reports-duplicates', 'each duplicate is reported, stamped by the inbox clock', async (h, events, clock) => {
      const input = delivery();
      await deliver(h, input);
      expect(events.length).toBe(0);
      await deliver(h, input);
      await deliver(h, input);
      expect(events).toEqual([
        { type: 'inbox_duplicate', at: clock.now(), consumer: input.consumer, eventId: input.eventId },
        { type: 'inbox_duplicate', at: clock.now(), consumer: input.consumer, eventId: input.eventId },
      ]);
    });

    it(
      'inbox.process.reports-duplicates: a listener that throws changes no outcome',
      async () => {
        const h = await options.createInbox({
          onEvent: () => {
            throw new Error('metrics sink down');
          },
          clock: manualClock(0),
        });
        try {
          const input = delivery();
          expect(await deliver(h, input)).toBe('processed');
          expect(await deliver(h, input)).toBe('duplicate');
        } finally {
          await h.close?.();
        }
      },
      timeout,
    );

    test('inbox.run.commits', 'run processes in a transaction of its own and commits', async (h) => {
      const input = delivery();
      expect(await h.inbox.run(input, (tx) => h.apply(tx, input.eventId))).toBe('processed');
      expect(await h.applied(input.eventId)).toBe(1);
      expect(await h.inbox.run(input, (tx) => h.apply(tx, input.eventId))).toBe('duplicate');
      expect(await h.applied(input.eventId)).toBe(1);
    });

    test('inbox.run.rolls-back', "when fn throws, run rolls back and rethrows fn's error unchanged", async (h) => {
      const input = delivery();
      const boom = new Error('ledger unavailable');
      const failure = await h.inbox
        .run(input, async (tx) => {
          await h.apply(tx, input.eventId);
          throw boom;
        })
        .catch((error: unknown) => error);
      expect(failure).toBe(boom);
      expect(await h.applied(input.eventId)).toBe(0);
      expect(await h.inbox.run(input, (tx) => h.apply(tx, input.eventId))).toBe('processed');
    });

    test('inbox.purge.bounded', 'purgeProcessed deletes old records only, at most limit, and a purged pair is new again', async (h, _events, clock) => {
      const old = [delivery(), delivery(), delivery()];
      for (const input of old) await deliver(h, input);
      await advance(short);
      await clock.advance(short);
      const recent = delivery();
      await deliver(h, recent);
      expect(await h.inbox.purgeProcessed({ olderThanMs: short * 100, limit: 10 })).toBe(0);
      expect(await h.inbox.purgeProcessed({ olderThanMs: short / 2, limit: 2 })).toBe(2);
      expect(await h.inbox.purgeProcessed({ olderThanMs: short / 2, limit: 10 })).toBe(1);
      expect(await h.inbox.purgeProcessed({ olderThanMs: short / 2, limit: 10 })).toBe(0);
      expect(await deliver(h, recent)).toBe('duplicate');
      expect(await deliver(h, old[0]!)).toBe('processed');
    });
  });
}
