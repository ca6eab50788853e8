import { createIdempotency, type Scope } from '@oncely/core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { redisStore } from '../../src/index.js';
import { startWorker } from '../processes/workers.js';
import { deleteByPrefix, REDIS_URL, runPrefix } from '../servers/shared-server.js';

const client = new Redis(REDIS_URL);
const prefix = runPrefix('crash');
const store = redisStore({ client, prefix });
const LEASE_MS = 2_000;
const engine = createIdempotency({ store, leaseMs: LEASE_MS });
const scopeOf = (key: string): Scope => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until Redis says the record's lease has lapsed. */
async function untilLeaseLapses(scope: Scope): Promise<void> {
  const record = await store.get(scope);
  await sleep((record?.leaseRemainingMs ?? 0) + 100);
}

/** Starts an owner process and waits until its handler runs with the lease. */
async function ownerInHandler(key: string, counter: string) {
  const owner = startWorker({ REDIS_URL, PREFIX: prefix, KEY: key, COUNTER: counter, MODE: 'hold', LEASE_MS: String(LEASE_MS) });
  const inHandler = await owner.next('in-handler');
  return { owner, token: inHandler.token as string, fence: inHandler.fence as number };
}

afterAll(async () => {
  await deleteByPrefix(client, prefix);
  await client.quit();
});

describe('redis store: the owner process dies or stalls mid-handler', () => {
  it('after a SIGKILL the retry waits for the lease, then takes over with fence 2, and the dead owner’s token is refused', async () => {
    const key = 'sigkill';
    const counter = `${prefix}${key}:executions`;
    const request = { ...scopeOf(key), request: { amount: '10.00' } };
    const { owner, token, fence } = await ownerInHandler(key, counter);
    expect(fence).toBe(1);
    owner.child.kill('SIGKILL');
    expect(await owner.exited).toBe('SIGKILL');

    // The lease still runs on the Redis clock: an immediate retry must not execute.
    const early = await engine.run(request, async () => ({ status: 500 }));
    expect(early.kind).toBe('in_progress');
    expect(await client.get(counter)).toBe('1');

    await untilLeaseLapses(scopeOf(key));
    let successorFence = 0;
    const retry = await engine.run(request, async (context) => {
      successorFence = context.fence;
      await client.incr(counter);
      return { status: 201, body: { by: 'successor' } };
    });
    expect(retry.kind).toBe('executed');
    expect(successorFence).toBe(2);
    expect(await client.get(counter)).toBe('2');

    const late = { scope: scopeOf(key), token, state: 'succeeded' as const, response: { status: 201, body: { by: 'dead owner' } }, retentionMs: 60_000 };
    expect(await store.complete(late)).toBe('fence_lost');
    expect(await store.release({ scope: scopeOf(key), token })).toBe('fence_lost');
    expect(await store.extend({ scope: scopeOf(key), token, leaseMs: 60_000 })).toBe('fence_lost');
    const record = await store.get(scopeOf(key));
    expect(record?.fence).toBe(2);
    expect(record?.response?.body).toEqual({ by: 'successor' });
  });

  it('an owner paused past its lease (SIGSTOP) wakes after the takeover and cannot overwrite the successor’s outcome', async () => {
    const key = 'sigstop';
    const counter = `${prefix}${key}:executions`;
    const request = { ...scopeOf(key), request: { amount: '10.00' } };
    const { owner } = await ownerInHandler(key, counter);
    owner.child.kill('SIGSTOP');
    try {
      await untilLeaseLapses(scopeOf(key));
      const retry = await engine.run(request, async (context) => {
        await client.incr(counter);
        return { status: 201, body: { by: 'successor', fence: context.fence } };
      });
      expect(retry.kind).toBe('executed');
    } finally {
      owner.child.kill('SIGCONT');
    }
    owner.child.send({ type: 'finish' });
    // The stale owner's engine got fence_lost from Redis and reports the lost lease.
    expect((await owner.next('done')).kind).toBe('error:lease_lost');
    await owner.exited;
    expect(await client.get(counter)).toBe('2');
    const record = await store.get(scopeOf(key));
    expect(record?.response?.body).toEqual({ by: 'successor', fence: 2 });
    expect((await engine.run(request, async () => ({ status: 500 }))).kind).toBe('replayed');
  });
});
