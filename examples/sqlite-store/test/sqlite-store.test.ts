import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIdempotency, isStorageError, type Scope } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { sqliteStore } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'oncely-sqlite-unit-'));
const filename = join(dir, 'oncely.db');
// The store creates the table; a second connection damages rows behind its back.
await sqliteStore({ filename }).close();
const raw = new Database(filename);
afterAll(() => {
  raw.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.useRealTimers();
});

const scopeOf = (key: string): Scope => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key });
const claim = (scope: Scope, token = 'owner') => ({ scope, token, fingerprint: 'f'.repeat(64), leaseMs: 60_000, retentionMs: 86_400_000 });

/** Rejects with a StorageError of `code` naming the adapter and `operation`. */
async function storageFailure(promise: Promise<unknown>, code: 'storage_error' | 'corrupt_record', operation: string) {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(isStorageError(error), `expected a StorageError, got ${String(error)}`).toBe(true);
  expect(error).toMatchObject({ code, adapter: 'sqlite', operation });
}

describe('sqlite store: options', () => {
  it.each([
    ['no filename', { filename: '' }, /filename/],
    ['a table name that is not an identifier', { filename: join(dir, 'bad-table.db'), table: 'records; DROP TABLE x' }, /table/],
    ['a negative busyTimeoutMs', { filename: join(dir, 'bad-timeout.db'), busyTimeoutMs: -1 }, /busyTimeoutMs/],
    ['a fractional busyTimeoutMs', { filename: join(dir, 'bad-timeout.db'), busyTimeoutMs: 1.5 }, /busyTimeoutMs/],
  ])('%s is invalid_option, and no database file is created', (_, options, message) => {
    expect(() => sqliteStore(options)).toThrow(expect.objectContaining({ code: 'invalid_option', message: expect.stringMatching(message) }));
    expect(existsSync(options.filename || join(dir, 'never'))).toBe(false);
  });

  it('purgeExpired with a limit that is not a positive integer is invalid_option and deletes nothing', async () => {
    const store = sqliteStore({ filename });
    await expect(store.purgeExpired(0)).rejects.toMatchObject({ code: 'invalid_option' });
    await store.close();
  });
});

describe('sqlite store: fail closed', () => {
  it('a database that cannot be opened is a StorageError at construction', () => {
    expect(() => sqliteStore({ filename: join(dir, 'missing-folder', 'oncely.db') })).toThrow(
      expect.objectContaining({ code: 'storage_error', adapter: 'sqlite', operation: 'migrate' }),
    );
  });

  it('a call on a closed store is a StorageError, and the engine runs no handler', async () => {
    const store = sqliteStore({ filename });
    await store.close();
    await storageFailure(store.claim(claim(scopeOf(uniqueKey('closed')))), 'storage_error', 'claim');
    const handler = vi.fn(async () => ({ status: 201 }));
    const engine = createIdempotency({ store });
    await expect(engine.run({ tenant: 'acme', operation: 'payments.create.v1', key: uniqueKey('closed'), request: {} }, handler)).rejects.toMatchObject({
      code: 'storage_error',
    });
    expect(handler).not.toHaveBeenCalled();
  });

  it.each([
    ['an unknown state', "state = 'done'"],
    ['a completed record whose response is not JSON', "state = 'succeeded', lease_token = NULL, response = '{not json'"],
    ['a completed record whose response has no status', `state = 'failed_final', lease_token = NULL, response = '{"body":1}'`],
    ['a fence below 1', 'fence = 0'],
  ])('a row with %s is corrupt_record to get and to claim, and the engine runs no handler', async (_, damage) => {
    const store = sqliteStore({ filename });
    const key = uniqueKey('corrupt');
    const scope = scopeOf(key);
    await store.claim(claim(scope));
    raw.prepare(`UPDATE ${store.table} SET ${damage} WHERE idempotency_key = ?`).run(key);
    await storageFailure(store.get(scope), 'corrupt_record', 'get');
    await storageFailure(store.claim(claim(scope, 'second')), 'corrupt_record', 'claim');
    const handler = vi.fn(async () => ({ status: 201 }));
    const engine = createIdempotency({ store });
    await expect(engine.run({ ...scope, request: {} }, handler)).rejects.toMatchObject({ code: 'corrupt_record' });
    expect(handler).not.toHaveBeenCalled();
    await store.close();
  });
});

describe("sqlite store: SQLite's clock judges time", () => {
  it("leases and retention follow SQLite's clock, not the process's Date", async () => {
    const store = sqliteStore({ filename });
    const scope = scopeOf(uniqueKey('clock'));
    // The process believes it is 2001: a store that read Date.now() would date the record then.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2001-01-01T00:00:00Z') });
    await store.claim(claim(scope));
    const record = await store.get(scope);
    vi.useRealTimers();
    expect(Math.abs((record?.createdAt.getTime() ?? 0) - Date.now()), "createdAt is not SQLite's now").toBeLessThan(60_000);
    expect(record?.leaseRemainingMs).toBeGreaterThan(30_000);
    await store.close();
  });
});
