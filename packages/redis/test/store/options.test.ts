import { isOncelyError, type Scope } from '@oncely/core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_PREFIX, redisStore } from '../../src/index.js';
import { deleteByPrefix, REDIS_URL, runPrefix } from '../servers/shared-server.js';
import { rawRecord } from '../raw-record.js';

const client = new Redis(REDIS_URL);
const prefix = runPrefix('options');
const scope: Scope = { tenant: 'acme', principal: '', operation: 'orders.create.v1', key: 'k-1' };
const claimInput = (token: string) => ({ scope, token, fingerprint: 'f', leaseMs: 60_000, retentionMs: 600_000 });
const invalid = (make: () => unknown) => {
  try {
    make();
  } catch (error) {
    return isOncelyError(error, 'invalid_option');
  }
  return false;
};

afterAll(async () => {
  await deleteByPrefix(client, prefix);
  await client.quit();
});

describe('redis store: options', () => {
  it('refuses a missing client, braces in a prefix and a wait Redis would read as forever', () => {
    expect(invalid(() => redisStore({ client: undefined as unknown as Redis }))).toBe(true);
    expect(invalid(() => redisStore({ client, prefix: 'app:{tenant}:' }))).toBe(true);
    expect(invalid(() => redisStore({ client, wait: { replicas: 1, timeoutMs: 0 } }))).toBe(true);
    expect(invalid(() => redisStore({ client, wait: { replicas: 0, timeoutMs: 100 } }))).toBe(true);
    expect(invalid(() => redisStore({ client, wait: { replicas: 1.5, timeoutMs: 100 } }))).toBe(true);
    expect(invalid(() => redisStore({ client, prefix }))).toBe(false);
  });

  it('refuses a client whose keyPrefix has braces, and honours one without', async () => {
    const braced = new Redis(REDIS_URL, { keyPrefix: '{app}:', lazyConnect: true });
    expect(invalid(() => redisStore({ client: braced }))).toBe(true);
    braced.disconnect();

    const prefixed = new Redis(REDIS_URL, { keyPrefix: `${prefix}kp:` });
    try {
      const store = redisStore({ client: prefixed, prefix: 'inner:' });
      expect((await store.claim(claimInput('owner'))).kind).toBe('claimed');
      expect((await rawRecord(client, `${prefix}kp:${store.keyOf(scope)}`))?.token).toBe('owner');
    } finally {
      await prefixed.quit();
    }
  });

  it('stores with different prefixes keep separate records; the default prefix is oncely:idem:', async () => {
    const a = redisStore({ client, prefix: `${prefix}a:` });
    const b = redisStore({ client, prefix: `${prefix}b:` });
    expect((await a.claim(claimInput('a'))).kind).toBe('claimed');
    expect((await b.claim(claimInput('b'))).kind).toBe('claimed');
    expect(redisStore({ client }).keyOf(scope)).toBe(`${DEFAULT_PREFIX}{acme::orders.create.v1:k-1}`);
  });

  it('registers its scripts on a client once, however many stores share it', () => {
    const shared = new Redis(REDIS_URL, { lazyConnect: true });
    redisStore({ client: shared });
    const registered = { ...(shared as unknown as { scriptsSet: Record<string, unknown> }).scriptsSet };
    redisStore({ client: shared, prefix: 'other:' });
    const after = (shared as unknown as { scriptsSet: Record<string, unknown> }).scriptsSet;
    expect(Object.keys(registered).length).toBe(5);
    for (const [name, script] of Object.entries(registered)) expect(after[name]).toBe(script);
    shared.disconnect();
  });

  it('close leaves the caller’s client open', async () => {
    const store = redisStore({ client, prefix });
    await store.close();
    expect(await client.ping()).toBe('PONG');
  });
});
