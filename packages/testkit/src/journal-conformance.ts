import type { JournalEntry, JsonValue, OperationJournal } from '@oncely/core/adapter';
import { resourceTest } from './clause.js';
import { expectCode } from './expect-code.js';
import { sleep, type TestRunner, uniqueKey } from './runner.js';
import fc from 'fast-check';

/** Options of {@link runJournalConformance}. */
export interface JournalConformanceOptions<J extends OperationJournal> {
  /** Names the suite, e.g. `postgres journal`. */
  readonly name: string;
  /** Returns a journal with storage of its own (table, key prefix): listing tests count entries. */
  readonly createJournal: () => J | Promise<J>;
  /**
   * A second journal over the same storage, through a new client: proves entries are durable, not
   * cached. Default: the same instance (the memory journal has nothing else to reopen).
   */
  readonly reopen?: (journal: J) => OperationJournal | Promise<OperationJournal>;
  /** Closes what `createJournal` and `reopen` opened (default: `journal.close()`). */
  readonly closeJournal?: (journal: J) => Promise<void>;
  /** Lets the journal's clock move (default: real sleep, right for server clocks). */
  readonly advanceTime?: (ms: number) => Promise<void>;
  /** Concurrent callers in the race tests (default 20). */
  readonly raceSize?: number;
  /** fast-check runs of the model test (default 25). */
  readonly numRuns?: number;
  /** Per-test timeout in ms (default 30 000). */
  readonly timeoutMs?: number;
}

const receipt: JsonValue = { id: 'pay_1', amount: '10.00', note: 'naïve café ✓ 😀', nested: [1, 2.5, null, true] };

/**
 * The journal contract as tests, runner-agnostic like `@oncely/testkit`: key generated once and
 * stable across begins, reopens and concurrent begins; atomic attempt counting; first definitive
 * outcome wins; unknown and stale entries listed for reconciliation; purge of settled entries;
 * validation before storage; and a fast-check model test of the state machine.
 */
export function runJournalConformance<J extends OperationJournal>(
  runner: TestRunner,
  options: JournalConformanceOptions<J>,
): void {
  const { describe, it, expect } = runner;
  const raceSize = options.raceSize ?? 20;
  const numRuns = options.numRuns ?? 25;
  const timeout = options.timeoutMs ?? 30_000;
  const advance = options.advanceTime ?? sleep;
  const close = (journal: J) => (options.closeJournal ? options.closeJournal(journal) : journal.close());

  const test = resourceTest(it, timeout, options.createJournal, close);
  const id = (label: string) => uniqueKey(`op-${label}`);

  describe(`${options.name}: begin`, () => {
    test(['journal.begin.insert-or-read'], 'begin persists a fresh valid key before any attempt, and a second begin resumes it', async (journal) => {
      const operationId = id('begin');
      const first = await journal.begin(operationId, { request: { amount: 10 } });
      expect(first.kind).toBe('started');
      expect(first.entry.state).toBe('pending');
      expect(first.entry.attempts).toBe(0);
      expect(/^[\x21-\x7e]{1,255}$/.test(first.entry.key)).toBe(true);
      const again = await journal.begin(operationId, { request: { amount: 999 }, key: 'ignored-key' });
      expect(again.kind).toBe('resumed');
      expect(again.entry.key).toBe(first.entry.key);
      expect(again.entry.request).toEqual({ amount: 10 });
      expect((await journal.get(operationId))?.key).toBe(first.entry.key);
    });

    test(['journal.begin.durable'], 'the key survives a new client over the same storage', async (journal) => {
      const operationId = id('durable');
      const { entry } = await journal.begin(operationId);
      await journal.recordAttempt(operationId);
      const reopened = options.reopen ? await options.reopen(journal) : journal;
      try {
        const resumed = await reopened.begin(operationId);
        expect(resumed.kind).toBe('resumed');
        expect(resumed.entry.key).toBe(entry.key);
        expect(resumed.entry.attempts).toBe(1);
      } finally {
        if (reopened !== journal) await reopened.close();
      }
    });

    test(['journal.begin.atomic'], 'concurrent begins of one operation agree on one key and exactly one starts it', async (journal) => {
      const operationId = id('race');
      const results = await Promise.all(Array.from({ length: raceSize }, () => journal.begin(operationId)));
      expect(new Set(results.map((result) => result.entry.key)).size).toBe(1);
      expect(results.filter((result) => result.kind === 'started').length).toBe(1);
    });

    test(['journal.begin.distinct'], 'different operations get different keys', async (journal) => {
      const keys = await Promise.all(
        Array.from({ length: 10 }, async (_, index) => (await journal.begin(id(`distinct-${index}`))).entry.key),
      );
      expect(new Set(keys).size).toBe(10);
    });

    test(['journal.begin.explicit-key'], 'an explicit key is stored on the first begin', async (journal) => {
      const operationId = id('explicit');
      const key = uniqueKey('client-key');
      expect((await journal.begin(operationId, { key })).entry.key).toBe(key);
      expect((await journal.get(operationId))?.key).toBe(key);
    });

    test(['journal.input.validated'], 'bad input is rejected before storage: operation ids, keys, non-JSON requests', async (journal) => {
      for (const bad of ['', 'x'.repeat(256), 'line\nbreak', 'nul\u0000']) {
        await expectCode(journal.begin(bad), 'invalid_operation_id');
        await expectCode(journal.get(bad), 'invalid_operation_id');
      }
      await expectCode(journal.begin(id('bad-key'), { key: 'has space' }), 'invalid_key_characters');
      const nan = { amount: Number.NaN } as unknown as JsonValue;
      await expectCode(journal.begin(id('bad-request'), { request: nan }), 'invalid_request_payload');
      await expectCode(journal.listUnresolved({ staleAfterMs: -1 }), 'invalid_option');
      await expectCode(journal.purgeSettled({ olderThanMs: 0, limit: 0 }), 'invalid_option');
    });

    test(['journal.not-begun'], 'an operation that was never begun is refused, not created', async (journal) => {
      const operationId = id('ghost');
      await expectCode(journal.recordAttempt(operationId), 'operation_not_begun');
      await expectCode(journal.complete(operationId, { state: 'succeeded' }), 'operation_not_begun');
      await expectCode(journal.markUnknown(operationId, 'timeout'), 'operation_not_begun');
      expect(await journal.get(operationId)).toBeUndefined();
    });
  });

  describe(`${options.name}: attempts and outcomes`, () => {
    test(['journal.attempt.atomic'], 'concurrent attempts are all counted', async (journal) => {
      const operationId = id('attempts');
      await journal.begin(operationId);
      await Promise.all(Array.from({ length: raceSize }, () => journal.recordAttempt(operationId)));
      expect((await journal.get(operationId))?.attempts).toBe(raceSize);
    });

    test(['journal.outcome.first-wins'], 'a success is stored with its JSON value and the first outcome wins', async (journal) => {
      const operationId = id('success');
      await journal.begin(operationId);
      await journal.recordAttempt(operationId);
      const done = await journal.complete(operationId, { state: 'succeeded', value: receipt });
      expect(done.state).toBe('succeeded');
      expect(done.state === 'succeeded' && done.value).toEqual(receipt);
      const late = await journal.complete(operationId, { state: 'failed', error: { message: 'late' } });
      expect(late.state).toBe('succeeded');
      expect((await journal.markUnknown(operationId, 'late timeout')).state).toBe('succeeded');
      expect((await journal.recordAttempt(operationId)).attempts).toBe(1);
      const stored = await journal.get(operationId);
      expect(stored?.state === 'succeeded' && stored.value).toEqual(receipt);
    });

    test(['journal.outcome.failure'], 'a failure is stored with its error', async (journal) => {
      const operationId = id('failure');
      await journal.begin(operationId);
      await journal.complete(operationId, { state: 'failed', error: { status: 422, code: 'invalid_amount' } });
      const stored = await journal.get(operationId);
      expect(stored?.state).toBe('failed');
      expect(stored?.state === 'failed' && stored.error).toEqual({ status: 422, code: 'invalid_amount' });
    });

    test(['journal.unknown.resumes'], 'unknown keeps the last error until an attempt resumes the operation', async (journal) => {
      const operationId = id('unknown');
      await journal.begin(operationId);
      await journal.recordAttempt(operationId);
      const unknown = await journal.markUnknown(operationId, 'attempt timed out');
      expect(unknown.state === 'unknown' && unknown.lastError).toBe('attempt timed out');
      const resumed = await journal.recordAttempt(operationId);
      expect(resumed.state).toBe('pending');
      expect(resumed.attempts).toBe(2);
      expect((await journal.complete(operationId, { state: 'succeeded' })).state).toBe('succeeded');
    });

    test(['journal.times'], 'updatedAt moves with every change and createdAt does not', async (journal) => {
      const operationId = id('times');
      const { entry } = await journal.begin(operationId);
      await advance(30);
      const attempted = await journal.recordAttempt(operationId);
      expect(attempted.createdAt.getTime()).toBe(entry.createdAt.getTime());
      expect(attempted.updatedAt.getTime()).toBeGreaterThan(entry.updatedAt.getTime());
    });
  });

  describe(`${options.name}: reconciliation`, () => {
    test(['journal.list.unresolved'], 'unknown entries are listed at once, pending ones only once stale, settled ones never', async (journal) => {
      const unknown = id('list-unknown');
      const pending = id('list-pending');
      const settled = id('list-settled');
      for (const operationId of [unknown, pending, settled]) await journal.begin(operationId);
      await journal.markUnknown(unknown, 'deadline');
      await journal.complete(settled, { state: 'succeeded' });
      const now = await journal.listUnresolved({ staleAfterMs: 60_000 });
      expect(now.map((entry) => entry.operationId)).toEqual([unknown]);
      await advance(250);
      const later = await journal.listUnresolved({ staleAfterMs: 200 });
      expect(later.map((entry) => entry.operationId).sort()).toEqual([pending, unknown].sort());
      const stale = later.find((entry) => entry.operationId === pending);
      expect(stale?.state).toBe('pending');
    });

    test(['journal.list.order'], 'the list is oldest first and honours the limit', async (journal) => {
      const ids = [id('order-a'), id('order-b'), id('order-c')];
      for (const operationId of ids) {
        await journal.begin(operationId);
        await journal.markUnknown(operationId);
        await advance(20);
      }
      const listed = await journal.listUnresolved({ staleAfterMs: 60_000, limit: 2 });
      expect(listed.map((entry) => entry.operationId)).toEqual(ids.slice(0, 2));
      const entries: JournalEntry[] = await journal.listUnresolved({ staleAfterMs: 60_000 });
      expect(entries.length).toBe(3);
    });

    test(['journal.purge.settled'], 'purge deletes old settled entries only, and a purged id begins afresh with a new key', async (journal) => {
      const done = id('purge-done');
      const open = id('purge-open');
      const { entry } = await journal.begin(done);
      await journal.begin(open);
      await journal.complete(done, { state: 'failed', error: 'declined' });
      expect(await journal.purgeSettled({ olderThanMs: 60_000 })).toBe(0);
      await advance(150);
      expect(await journal.purgeSettled({ olderThanMs: 100 })).toBe(1);
      expect(await journal.get(done)).toBeUndefined();
      expect((await journal.get(open))?.state).toBe('pending');
      const again = await journal.begin(done);
      expect(again.kind).toBe('started');
      expect(again.entry.key === entry.key).toBe(false);
    });

    test(['journal.purge.limit'], 'purge honours its limit', async (journal) => {
      for (let index = 0; index < 3; index++) {
        const operationId = id(`purge-limit-${index}`);
        await journal.begin(operationId);
        await journal.complete(operationId, { state: 'succeeded' });
      }
      expect(await journal.purgeSettled({ olderThanMs: 0, limit: 2 })).toBe(2);
      expect(await journal.purgeSettled({ olderThanMs: 0 })).toBe(1);
    });
  });

  describe(`${options.name}: model`, () => {
    type Command =
      | { readonly op: 'begin' }
      | { readonly op: 'attempt' }
      | { readonly op: 'complete'; readonly state: 'succeeded' | 'failed'; readonly data: number }
      | { readonly op: 'unknown'; readonly message: string };
    const command: fc.Arbitrary<Command> = fc.oneof(
      fc.constant<Command>({ op: 'begin' }),
      fc.constant<Command>({ op: 'attempt' }),
      fc.record({ op: fc.constant('complete' as const), state: fc.constantFrom('succeeded' as const, 'failed' as const), data: fc.integer() }),
      fc.record({ op: fc.constant('unknown' as const), message: fc.string({ maxLength: 20 }) }),
    );

    test(['journal.model'], 'any sequence of calls leaves the entry where the state machine says', async (journal) => {
      await fc.assert(
        fc.asyncProperty(fc.array(command, { maxLength: 12 }), async (commands) => {
          const operationId = id('model');
          const { entry } = await journal.begin(operationId);
          const model = { state: 'pending' as string, attempts: 0, data: undefined as JsonValue | undefined, lastError: undefined as string | undefined };
          const final = () => model.state === 'succeeded' || model.state === 'failed';
          for (const step of commands) {
            let reported: JournalEntry;
            if (step.op === 'begin') {
              reported = (await journal.begin(operationId)).entry;
            } else if (step.op === 'attempt') {
              reported = await journal.recordAttempt(operationId);
              if (!final()) Object.assign(model, { state: 'pending', attempts: model.attempts + 1, lastError: undefined });
            } else if (step.op === 'complete') {
              const outcome = step.state === 'succeeded' ? { state: step.state, value: step.data } : { state: step.state, error: step.data };
              reported = await journal.complete(operationId, outcome);
              if (!final()) Object.assign(model, { state: step.state, data: step.data, lastError: undefined });
            } else {
              reported = await journal.markUnknown(operationId, step.message);
              if (!final()) Object.assign(model, { state: 'unknown', lastError: step.message });
            }
            const stored = await journal.get(operationId);
            for (const seen of [reported, stored]) {
              expect(seen?.key).toBe(entry.key);
              expect(seen?.state).toBe(model.state);
              expect(seen?.attempts).toBe(model.attempts);
              if (seen?.state === 'succeeded') expect(seen.value).toEqual(model.data);
              if (seen?.state === 'failed') expect(seen.error).toEqual(model.data);
              if (seen?.state === 'unknown') expect(seen.lastError).toEqual(model.lastError);
            }
          }
        }),
        { numRuns },
      );
    });
  });
}
