import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isStorageError, StorageError } from '../../src/index.js';
import { type JournalEntry, memoryJournal, type OperationJournal, retryOperation } from '../../src/journal.js';

/** The real memory journal, with one method's answer rewritten on the way back. */
function rewriting(method: 'begin' | 'recordAttempt', rewrite: (answer: never) => unknown): OperationJournal {
  const inner = memoryJournal();
  return new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== method) return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: unknown[]) => rewrite((await (value as (...a: unknown[]) => Promise<never>).apply(target, args)) as never);
    },
  });
}

/** Runs one journaled operation; says how it ended and how many attempts were sent. */
async function attempt(journal: OperationJournal) {
  let sent = 0;
  const outcome = await retryOperation(
    async () => {
      sent += 1;
      return 1;
    },
    { maxAttempts: 1 },
    { journal, operationId: 'order-1' },
  ).then(
    (result) => ({ result }) as { result?: unknown; error?: unknown },
    (error: unknown) => ({ error }) as { result?: unknown; error?: unknown },
  );
  return { outcome, sent };
}

const expectCorrupt = (outcome: { error?: unknown }, operation: string) => {
  expect(outcome.error).toBeInstanceOf(StorageError);
  expect(outcome.error).toMatchObject({ code: 'corrupt_record', operation, adapter: 'memory' });
};

type Begin = { kind: string; entry: JournalEntry };

describe('a journal answer outside the contract is corrupt_record, and no attempt is sent', () => {
  it.each<[string, (answer: Begin) => unknown]>([
    ['undefined', () => undefined],
    ['a string', () => 'started'],
    ["{ kind: 'weird' }", (answer) => ({ ...answer, kind: 'weird' })],
    ['started without an entry', () => ({ kind: 'started' })],
    ['the entry of another operation', (answer) => ({ ...answer, entry: { ...answer.entry, operationId: 'order-2' } })],
    ['an entry with an empty key', (answer) => ({ ...answer, entry: { ...answer.entry, key: '' } })],
    ['an entry with a key holding a space', (answer) => ({ ...answer, entry: { ...answer.entry, key: 'a b' } })],
    ['an entry of an unknown state', (answer) => ({ ...answer, entry: { ...answer.entry, state: 'done' } })],
    ['an entry with attempts -1', (answer) => ({ ...answer, entry: { ...answer.entry, attempts: -1 } })],
  ])('begin answering %s', async (_name, rewrite) => {
    const { outcome, sent } = await attempt(rewriting('begin', rewrite));
    expectCorrupt(outcome, 'journal.begin');
    expect(sent).toBe(0);
  });

  it.each<[string, (entry: JournalEntry) => unknown]>([
    ['undefined', () => undefined],
    ['an entry under another key than begin gave', (entry) => ({ ...entry, key: 'another-key' })],
    ['the entry of another operation', (entry) => ({ ...entry, operationId: 'order-2' })],
    ['an entry of an unknown state', (entry) => ({ ...entry, state: 42 })],
    ['an entry with a fractional attempt count', (entry) => ({ ...entry, attempts: 1.5 })],
  ])('recordAttempt answering %s', async (_name, rewrite) => {
    const { outcome, sent } = await attempt(rewriting('recordAttempt', rewrite));
    expectCorrupt(outcome, 'journal.recordAttempt');
    expect(sent).toBe(0);
  });

  it('the same rewrites passing answers through leave the operation working', async () => {
    const { outcome, sent } = await attempt(rewriting('recordAttempt', (entry) => entry));
    expect(outcome.result).toMatchObject({ outcome: 'succeeded', value: 1 });
    expect(sent).toBe(1);
  });

  it('property: a begin answer with any member of its entry replaced by a wrong value is corrupt_record, nothing sent', async () => {
    const wrong = {
      kind: fc.oneof(fc.constantFrom('weird', '', undefined), fc.integer()),
      operationId: fc.oneof(fc.constantFrom('order-2', '', undefined), fc.integer()),
      key: fc.oneof(fc.constantFrom('', 'has space', 'k'.repeat(256), undefined), fc.integer(), fc.constant(null)),
      state: fc.oneof(fc.string().filter((state) => !['pending', 'unknown', 'succeeded', 'failed'].includes(state)), fc.anything()),
      attempts: fc.oneof(fc.integer({ max: -1 }), fc.double().filter((n) => !Number.isSafeInteger(n)), fc.string(), fc.constant(undefined)),
    };
    const member = fc.oneof(...Object.entries(wrong).map(([name, values]) => values.map((value) => [name, value] as const)));
    await fc.assert(
      fc.asyncProperty(member, async ([name, value]) => {
        const { outcome, sent } = await attempt(
          rewriting('begin', (answer: Begin) => (name === 'kind' ? { ...answer, kind: value } : { ...answer, entry: { ...answer.entry, [name]: value } })),
        );
        expect(isStorageError(outcome.error) && outcome.error.code === 'corrupt_record').toBe(true);
        expect(sent).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});
