import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { corruptRecord, storageGuard, storageTransaction, toStorageError } from '../../src/adapter.js';
import { isOncelyError, isStorageError, OncelyError, StorageError } from '../../src/index.js';

const guard = storageGuard('mysql');

describe('storageGuard: one storage-call guard for every adapter', () => {
  it('answers what the call answers, a promise or a plain value', async () => {
    expect(await guard('get', async () => 7)).toBe(7);
    expect(await guard('get', () => 8)).toBe(8);
  });

  it('turns a rejection or a synchronous throw into a StorageError naming adapter and operation', async () => {
    for (const call of [async () => Promise.reject(new Error('ECONNRESET')), () => {
      throw new Error('ECONNRESET');
    }]) {
      const error = await guard('outbox.claim', call).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StorageError);
      expect(error).toMatchObject({ code: 'storage_error', adapter: 'mysql', operation: 'outbox.claim' });
      expect((error as Error).message).toBe('oncely/mysql: outbox.claim failed: ECONNRESET');
    }
  });

  it('a corruptRecord leaves as corrupt_record, still a StorageError, so callers fail closed', async () => {
    const cause = corruptRecord('the record has the unknown state "done"');
    const error = await guard('claim', async () => Promise.reject(cause)).catch((caught: unknown) => caught);
    expect(isStorageError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'corrupt_record', adapter: 'mysql', operation: 'claim', cause });
    expect((error as Error).message).toBe('oncely/mysql: claim read a record it cannot trust: the record has the unknown state "done"');
  });

  it('leaves oncely errors raised inside the call as they are, and tells onFailure what leaves', async () => {
    const refusal = new OncelyError('duplicate_event', 'taken');
    const seen: unknown[] = [];
    expect(await guard('outbox.enqueue', () => Promise.reject(refusal), (error) => seen.push(error)).catch((caught: unknown) => caught)).toBe(refusal);
    const wrapped = await guard('get', () => Promise.reject('down'), (error) => seen.push(error)).catch((caught: unknown) => caught);
    expect(seen).toEqual([refusal, wrapped]);
  });

  it('property: whatever a call throws leaves as an oncely error, a StorageError unless it already was one', async () => {
    const thrown = fc.oneof(
      fc.anything(),
      fc.string().map((message) => new Error(message)),
      fc.string().map((detail) => corruptRecord(detail)),
      fc.constantFrom(...(['invalid_event', 'lease_lost', 'storage_error'] as const)).map((code) => new OncelyError(code, code)),
    );
    await fc.assert(
      fc.asyncProperty(thrown, fc.boolean(), async (value, sync) => {
        const call = sync
          ? () => {
              throw value;
            }
          : () => Promise.reject(value);
        const error = await guard('release', call).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(isOncelyError(error)).toBe(true);
        if (isOncelyError(value)) expect(error).toBe(value);
        else {
          expect(isStorageError(error)).toBe(true);
          expect((error as StorageError).cause).toBe(value);
        }
      }),
    );
  });
});

describe('StorageError of a value that cannot become text', () => {
  it('a thrown { toString: "" } (String() throws on it) still leaves as a StorageError with that cause', async () => {
    const value = { toString: '' };
    const error = await guard('release', () => Promise.reject(value)).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(isStorageError(error)).toBe(true);
    expect((error as StorageError).cause).toBe(value);
    expect((error as StorageError).message).toContain('cannot be shown as text');
  });
});

describe('StorageError and isStorageError', () => {
  it('storage_error by default; corrupt_record when asked; isStorageError is true for both and nothing else', () => {
    expect(new StorageError('pg', 'claim', new Error('x')).code).toBe('storage_error');
    expect(new StorageError('pg', 'claim', new Error('x'), 'corrupt_record').code).toBe('corrupt_record');
    expect(isStorageError(toStorageError('pg', 'get', corruptRecord('bad')))).toBe(true);
    expect(isStorageError(new OncelyError('lease_lost', 'x'))).toBe(false);
    expect(isStorageError(corruptRecord('not wrapped yet'))).toBe(false);
  });
});

describe('storageTransaction: errors of the work pass, errors of the transaction become StorageErrors', () => {
  /** A transaction that runs the work and then commits by `commit`; `attempts` runs of the work, as a retrying driver does. */
  const opener = (commit: () => Promise<void>, attempts = 1) => async (work: (tx: string) => Promise<string>) => {
    let value = '';
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        value = await work(`tx-${attempt}`);
      } catch (error) {
        if (attempt === attempts) throw error;
      }
    }
    await commit();
    return value;
  };

  it('answers what the work answers, inside the transaction it was given', async () => {
    expect(await storageTransaction('mysql', 'inbox.run', opener(async () => undefined), async (tx) => `ran in ${tx}`)).toBe('ran in tx-1');
  });

  it("the work's own error leaves unchanged, whatever it is", async () => {
    for (const error of [new Error('ledger down'), 'a string', new OncelyError('invalid_event', 'bad')]) {
      const caught = await storageTransaction('mysql', 'inbox.run', opener(async () => undefined), async () => Promise.reject(error)).catch((e: unknown) => e);
      expect(caught).toBe(error);
    }
  });

  it('a failed begin or commit is a StorageError, even after an earlier attempt of the work failed', async () => {
    const lost = new Error('connection lost at COMMIT');
    let calls = 0;
    const caught = await storageTransaction('mysql', 'inbox.run', opener(() => Promise.reject(lost), 2), async () => {
      calls += 1;
      if (calls === 1) throw new Error('write conflict, retried');
      return 'ok';
    }).catch((e: unknown) => e);
    expect(caught).toMatchObject({ code: 'storage_error', adapter: 'mysql', operation: 'inbox.run', cause: lost });
    const refused = await storageTransaction('mysql', 'inbox.run', () => Promise.reject(new Error('BEGIN refused')), async () => 'never').catch((e: unknown) => e);
    expect(isStorageError(refused)).toBe(true);
  });
});
