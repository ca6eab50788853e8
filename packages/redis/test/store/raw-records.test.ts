import { isStorageError, type Scope } from '@oncely/core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { redisStore } from '../../src/index.js';
import { deleteByPrefix, REDIS_URL, runPrefix } from '../servers/shared-server.js';
import { rawRecord } from '../raw-record.js';

const client = new Redis(REDIS_URL);
const prefix = runPrefix('raw');
const store = redisStore({ client, prefix });
const HOUR = 3_600_000;
let counter = 0;
const scopeOf = (over: Partial<Scope> = {}): Scope => ({
  tenant: 'acme',
  principal: 'alice',
  operation: 'payments.create.v1',
  key: `raw-${++counter}`,
  ...over,
});
const claim = (scope: Scope, token: string, leaseMs = 60_000, retentionMs = HOUR) =>
  store.claim({ scope, token, fingerprint: 'f'.repeat(64), leaseMs, retentionMs });

afterAll(async () => {
  await deleteByPrefix(client, prefix);
  await client.quit();
});

const recordOf = async (scope: Scope) => (await rawRecord(client, store.keyOf(scope)))!;

describe('redis store: what reaches Redis', () => {
  it('a fresh claim writes one JSON string whose times are relative to the key expiry, set by the server', async () => {
    const scope = scopeOf();
    const before = Date.now();
    await claim(scope, 'owner-token');
    const key = store.keyOf(scope);
    expect(await client.type(key)).toBe('string');
    expect(await recordOf(scope)).toEqual({
      state: 'in_progress',
      fence: 1,
      token: 'owner-token',
      fingerprint: 'f'.repeat(64),
      leaseMs: 60_000,
      ttlMs: HOUR,
    });
    // No client clock in the record: the server's expiry is the only time it carries.
    const expiresAt = await client.pexpiretime(key);
    expect(expiresAt).toBeGreaterThanOrEqual(before + HOUR - 1_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + HOUR + 1_000);
    const record = await store.get(scope);
    expect(record?.createdAt.getTime()).toBe(expiresAt - HOUR);
    expect(record?.expiresAt.getTime()).toBe(expiresAt);
    expect(record?.leaseRemainingMs).toBeGreaterThan(55_000);
    expect(record?.leaseRemainingMs).toBeLessThanOrEqual(60_000);
  });

  it('extend rewrites the record with absolute times from the server clock and keeps the creation time', async () => {
    const scope = scopeOf();
    await claim(scope, 'owner', 60_000, 60_000);
    const createdAt = (await client.pexpiretime(store.keyOf(scope))) - 60_000;
    expect(await store.extend({ scope, token: 'owner', leaseMs: 120_000 })).toBe('ok');
    const raw = await recordOf(scope);
    expect(raw).toMatchObject({ state: 'in_progress', fence: 1, token: 'owner', createdAt });
    expect(raw.leaseMs).toBeUndefined();
    expect(raw.expiresAt).toBe(raw.leaseUntil);
    expect(raw.leaseUntil as number).toBeGreaterThanOrEqual(createdAt + 120_000);
    expect(await client.pexpiretime(store.keyOf(scope))).toBe(raw.expiresAt);
  });

  it('complete stores the response inside the record, ends the lease and resets the TTL to the retention', async () => {
    const scope = scopeOf();
    await claim(scope, 'owner', 60_000, 60_000);
    const response = { status: 201, headers: { location: '/p/1' }, body: { amount: 10.5, list: [1, null, 'é😀'], s: 'a|"b"\\' } };
    expect(await store.complete({ scope, token: 'owner', state: 'succeeded', response, retentionMs: HOUR })).toBe('ok');
    const raw = await recordOf(scope);
    expect(raw).toMatchObject({ state: 'succeeded', fence: 1, token: 'owner', fingerprint: 'f'.repeat(64), response });
    expect(raw.leaseUntil).toBeUndefined();
    expect(await client.pexpiretime(store.keyOf(scope))).toBe(raw.expiresAt);
    expect(await client.pttl(store.keyOf(scope))).toBeGreaterThan(HOUR - 60_000);
    expect((await store.get(scope))?.response).toEqual(response);
  });

  it('tokens and fingerprints with quotes, backslashes and non-ASCII survive the round trip through Lua', async () => {
    const scope = scopeOf();
    const token = 'tok "\\ / é 😀 \u0001';
    const fingerprint = 'fp "quoted" \\ ü';
    expect((await store.claim({ scope, token, fingerprint, leaseMs: 60_000, retentionMs: HOUR })).kind).toBe('claimed');
    expect(await store.extend({ scope, token, leaseMs: 60_000 })).toBe('ok');
    expect((await store.get(scope))?.fingerprint).toBe(fingerprint);
    expect(await store.complete({ scope, token: 'other', state: 'succeeded', response: { status: 200 }, retentionMs: HOUR })).toBe('fence_lost');
    expect(await store.complete({ scope, token, state: 'succeeded', response: { status: 200 }, retentionMs: HOUR })).toBe('ok');
    expect(await recordOf(scope)).toMatchObject({ token, fingerprint, state: 'succeeded' });
  });

  it('release deletes the key and an expired record is gone from Redis, not only hidden', async () => {
    const released = scopeOf();
    await claim(released, 'owner');
    expect(await store.release({ scope: released, token: 'owner' })).toBe('ok');
    expect(await client.exists(store.keyOf(released))).toBe(0);

    const expiring = scopeOf();
    await claim(expiring, 'owner', 100, 100);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await client.exists(store.keyOf(expiring))).toBe(0);
    expect(await store.purgeExpired(100)).toBe(0);
  });

  it('tenants that differ only in lone surrogates or U+FFFD get three records', async () => {
    const key = `surrogates-${++counter}`;
    const scopes = ['\uD800', '\uDBFF', '\uFFFD'].map((tenant) => scopeOf({ tenant, key }));
    for (const scope of scopes) expect((await claim(scope, 'owner')).kind).toBe('claimed');
    expect(new Set(scopes.map((scope) => store.keyOf(scope))).size).toBe(3);
    for (const scope of scopes) expect(await client.exists(store.keyOf(scope))).toBe(1);
  });

  it('a key holding something this store did not write fails closed with a StorageError and is left as it was', async () => {
    const wrongType = scopeOf();
    await client.hset(store.keyOf(wrongType), { state: 'in_progress' });
    await client.pexpire(store.keyOf(wrongType), 60_000);
    const error = await claim(wrongType, 'owner').catch((e: unknown) => e);
    expect(isStorageError(error)).toBe(true);
    expect((error as Error).message).toMatch(/^oncely\/redis: claim failed: WRONGTYPE/);

    // What the client reads is corrupt_record; a record the Lua script itself trips over fails in Redis (storage_error).
    const cases = [
      ['not a record', 'corrupt_record'],
      ['{"state":"maybe","fingerprint":"f","fence":1}', 'corrupt_record'],
      ['{"state":"in_progress","fence":"x"}', 'storage_error'],
    ] as const;
    for (const [value, code] of cases) {
      const corrupt = scopeOf();
      await client.set(store.keyOf(corrupt), value, 'PX', 60_000);
      for (const attempt of [() => claim(corrupt, 'owner'), () => store.get(corrupt)]) {
        const failure = await attempt().catch((e: unknown) => e);
        expect(isStorageError(failure)).toBe(true);
        expect((failure as { code?: string }).code).toBe(code);
      }
      expect(await client.get(store.keyOf(corrupt))).toBe(value);
    }
  });

  it('a completed record whose response is not a stored response fails closed instead of replaying garbage', async () => {
    const scope = scopeOf();
    await claim(scope, 'owner');
    await store.complete({ scope, token: 'owner', state: 'succeeded', response: { status: 200 }, retentionMs: HOUR });
    const raw = (await client.get(store.keyOf(scope)))!;
    for (const broken of [raw.replace('"response":{"status":200}', '"response":"200"'), raw.slice(0, -2)]) {
      await client.set(store.keyOf(scope), broken, 'KEEPTTL');
      for (const attempt of [() => store.get(scope), () => claim(scope, 'again')]) {
        const error = await attempt().catch((e: unknown) => e);
        expect(isStorageError(error)).toBe(true);
        expect(error).toMatchObject({ code: 'corrupt_record', adapter: 'redis' });
        expect((error as Error).message).toMatch(/unexpected record reply/);
      }
    }
  });
});
