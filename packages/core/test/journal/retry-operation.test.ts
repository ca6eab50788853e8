import { describe, expect, it } from 'vitest';
import { isOncelyError, isStorageError, manualClock, StorageError } from '../../src/index.js';
import {
  memoryJournal,
  type OperationAttemptContext,
  type OperationJournal,
  retryOperation,
} from '../../src/journal.js';
import { retryPolicy } from '../../src/retry.js';
import { drive } from '../retry/drive.js';

const status = (code: number) => new Response(null, { status: code });

function setup() {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const journal = memoryJournal({ clock });
  const policy = retryPolicy<number>({ clock, random: () => 0.5, maxAttempts: 3, deadlineMs: 10_000, attemptTimeoutMs: 2_000 });
  return { clock, journal, policy };
}

describe('retryOperation', () => {
  it('persists the key before the first attempt and sends that key on every attempt', async () => {
    const { clock, journal, policy } = setup();
    const seen: { key: string; storedKey: string | undefined; attempts: number | undefined }[] = [];
    const outcome = await drive(
      clock,
      retryOperation(
        async ({ key }) => {
          const stored = await journal.get('order-1');
          seen.push({ key, storedKey: stored?.key, attempts: stored?.attempts });
          if (seen.length < 3) throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
          return 7;
        },
        policy,
        { journal, operationId: 'order-1', request: { amount: 10 } },
      ),
      10,
    );
    expect(outcome).toEqual({ outcome: 'succeeded', value: 7, attempts: 3 });
    expect(new Set(seen.map((attempt) => attempt.key)).size).toBe(1);
    expect(seen.every((attempt) => attempt.storedKey === attempt.key)).toBe(true);
    // Each attempt is counted before it is sent.
    expect(seen.map((attempt) => attempt.attempts)).toEqual([1, 2, 3]);
    const entry = await journal.get('order-1');
    expect(entry).toMatchObject({ state: 'succeeded', value: 7, attempts: 3, request: { amount: 10 } });
  });

  it('a run that ends unknown is resumed by the next run with the same key, and the answer is recorded', async () => {
    const { clock, journal, policy } = setup();
    const keys: string[] = [];
    const first = await drive(
      clock,
      retryOperation(
        async ({ key }: OperationAttemptContext) => {
          keys.push(key);
          return new Promise<number>(() => undefined);
        },
        policy,
        { journal, operationId: 'order-2' },
      ),
      100,
    );
    expect(first.outcome).toBe('unknown');
    expect(first.outcome === 'unknown' && first.key).toBe(keys[0]);
    const unknown = await journal.listUnresolved({ staleAfterMs: 60_000 });
    expect(unknown.map((entry) => [entry.operationId, entry.state])).toEqual([['order-2', 'unknown']]);

    const second = await drive(
      clock,
      retryOperation(
        async ({ key }) => {
          keys.push(key);
          return 99;
        },
        policy,
        { journal, operationId: 'order-2' },
      ),
    );
    expect(second).toMatchObject({ outcome: 'succeeded', value: 99 });
    expect(new Set(keys).size).toBe(1);
    expect(await journal.get('order-2')).toMatchObject({ state: 'succeeded', attempts: keys.length });
    expect(await journal.listUnresolved({ staleAfterMs: 0 })).toEqual([]);
  });

  it('a settled operation returns its recorded outcome without sending anything', async () => {
    const { journal, policy } = setup();
    await retryOperation(async () => 5, policy, { journal, operationId: 'order-3' });
    let calls = 0;
    const again = await retryOperation(async () => {
      calls += 1;
      return 6;
    }, policy, { journal, operationId: 'order-3' });
    expect(calls).toBe(0);
    expect(again).toEqual({ outcome: 'succeeded', value: 5, attempts: 1 });
  });

  it('records a definitive failure as described JSON, with no stack', async () => {
    const { journal } = setup();
    const policy = retryPolicy<Response>({ maxAttempts: 3 });
    const outcome = await retryOperation(async () => status(422), policy, {
      journal,
      operationId: 'order-4',
      encodeError: (error) => ({ status: (error as Response).status }),
    });
    expect(outcome).toMatchObject({ outcome: 'failed', stoppedBy: 'answer' });
    expect(await journal.get('order-4')).toMatchObject({ state: 'failed', error: { status: 422 }, attempts: 1 });
    const thrown = await retryOperation(async () => Promise.reject(new RangeError('nope')), retryPolicy(), { journal, operationId: 'order-5' });
    expect(thrown.outcome).toBe('failed');
    expect(await journal.get('order-5')).toMatchObject({ state: 'failed', error: { name: 'RangeError', message: 'nope' } });
  });

  it('attempts all refused before running leave the entry pending, so a later run retries the same key', async () => {
    const { clock, journal } = setup();
    const policy = retryPolicy<Response>({ clock, random: () => 0, maxAttempts: 2 });
    const outcome = await drive(clock, retryOperation(async () => status(429), policy, { journal, operationId: 'order-6' }));
    expect(outcome).toMatchObject({ outcome: 'failed', stoppedBy: 'attempts' });
    expect(await journal.get('order-6')).toMatchObject({ state: 'pending', attempts: 2 });
  });

  it('fails closed: when the journal cannot record the attempt, nothing is sent and the StorageError surfaces', async () => {
    const { journal, policy } = setup();
    const broken: OperationJournal = {
      ...journal,
      name: 'broken',
      begin: journal.begin,
      recordAttempt: async () => {
        throw new StorageError('broken', 'journal.recordAttempt', new Error('connection lost'));
      },
    };
    let calls = 0;
    const failure = await retryOperation(async () => {
      calls += 1;
      return 1;
    }, policy, { journal: broken, operationId: 'order-7' }).catch((error: unknown) => error);
    expect(calls).toBe(0);
    expect(isStorageError(failure)).toBe(true);
    expect(await journal.get('order-7')).toMatchObject({ state: 'pending', attempts: 0 });
  });

  it('rejects a bad operation id before anything else', async () => {
    const { journal, policy } = setup();
    const error = await retryOperation(async () => 1, policy, { journal, operationId: '' }).catch((caught: unknown) => caught);
    expect(isOncelyError(error, 'invalid_operation_id')).toBe(true);
  });
});
