import { isStorageError, type Scope } from '@oncely/core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { redisStore } from '../../src/index.js';
import { deleteByPrefix, REDIS_URL, runPrefix } from '../servers/shared-server.js';

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

describe('redis store: what reaches Redis', () => {
  it('a claim writes one hash with state, fence, token and lease, expiring with the retention', async () => {
    const scope = scopeOf();
    await claim(scope, 'owner-token');
    const key = store.keyOf(scope);
    const raw = await client.hgetall(key);
    expect(raw.state).toBe('in_progress');
    expect(raw.fence).toBe('1');
    expect(raw.token).toBe('owner-token');
    expect(raw.fingerprint).toBe('f'.repeat(64));
    expect(Number(raw.lease_until) - Number(raw.created_at)).toBe(60_000);
    expect(Number(raw.expires_at) - Number(raw.created_at)).toBe(HOUR);
    expect(await client.pexpiretime(key)).toBe(Number(raw.expires_at));
    expect(await client.type(key)).toBe('hash');
  });

  it('complete stores the response JSON, ends the lease and resets the TTL to the retention', async () => {
    const scope = scopeOf();
    await claim(scope, 'owner', 60_000, 60_000);
    const response = { status: 201, headers: { location: '/p/1' }, body: { amount: 10.5, list: [1, null, 'é😀'] } };
    expect(await store.complete({ scope, token: 'owner', state: 'succeeded', response, retentionMs: HOUR })).toBe('ok');
    const raw = await client.hgetall(store.keyOf(scope));
    expect(raw.state).toBe('succeeded');
    expect(JSON.parse(raw.response!)).toEqual(response);
    expect(raw.lease_until).toBeUndefined();
    expect(await client.pexpiretime(store.keyOf(scope))).toBe(Number(raw.expires_at));
    expect(await client.pttl(store.keyOf(scope))).toBeGreaterThan(HOUR - 60_000);
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

  it('a key holding something this store did not write fails closed with a StorageError', async () => {
    const wrongType = scopeOf();
    await client.set(store.keyOf(wrongType), 'not a record', 'PX', 60_000);
    const error = await claim(wrongType, 'owner').catch((e: unknown) => e);
    expect(isStorageError(error)).toBe(true);
    expect((error as Error).message).toMatch(/^oncely\/redis: claim failed: WRONGTYPE/);

    const corrupt = scopeOf();
    await client.hset(store.keyOf(corrupt), { state: 'maybe', fingerprint: 'f', fence: '1' });
    await client.pexpire(store.keyOf(corrupt), 60_000);
    for (const attempt of [() => claim(corrupt, 'owner'), () => store.get(corrupt)]) {
      const failure = await attempt().catch((e: unknown) => e);
      expect(isStorageError(failure)).toBe(true);
      expect((failure as Error).message).toMatch(/unexpected record reply/);
    }
    expect(await client.hget(store.keyOf(corrupt), 'state')).toBe('maybe');
  });

  it('a stored response that is not JSON fails closed instead of replaying garbage', async () => {
    const scope = scopeOf();
    await claim(scope, 'owner');
    await store.complete({ scope, token: 'owner', state: 'succeeded', response: { status: 200 }, retentionMs: HOUR });
    await client.hset(store.keyOf(scope), 'response', '{truncated');
    const error = await store.get(scope).catch((e: unknown) => e);
    expect(isStorageError(error)).toBe(true);
  });
});
