import { createIdempotency, type EngineEvent, isStorageError, type Scope } from '@oncely/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { diffCommandStats, readCommandStats, redisStore } from '../../src/index.js';
import { type PrivateServer, startPrivateServer } from '../servers/private-server.js';
import { rawRecord } from '../raw-record.js';

let primary: PrivateServer;
let replica: PrivateServer;
let client: Redis;
let replicaClient: Redis;
const wait = { replicas: 1, timeoutMs: 1_000 };
const scopeOf = (key: string): Scope => ({ tenant: 'acme', principal: '', operation: 'payments.create.v1', key });
const request = (key: string) => ({ ...scopeOf(key), request: { amount: '10.00' } });

/** Waits until the primary counts the replica online: a probe write is acknowledged by WAIT. */
async function untilLinked(): Promise<void> {
  for (let i = 0; i < 100; i++) {
    await client.set('link-probe', String(i));
    if ((await client.wait(1, 100)) === 1) return;
  }
  throw new Error('the replica did not come online');
}

/** Runs `work` with the replica process stopped (SIGSTOP): it acknowledges nothing meanwhile. */
async function withReplicaPaused<T>(work: () => Promise<T>): Promise<T> {
  replica.pause();
  try {
    return await work();
  } finally {
    replica.resume();
  }
}

beforeAll(async () => {
  // No diskless-sync delay: the replica links at once instead of after Redis's default 5 s.
  primary = await startPrivateServer(['--repl-diskless-sync-delay', '0']);
  replica = await startPrivateServer(['--replicaof', '127.0.0.1', String(primary.port)]);
  client = new Redis(primary.url);
  replicaClient = new Redis(replica.url);
  await untilLinked();
});

afterAll(async () => {
  await Promise.allSettled([client.quit(), replicaClient.quit()]);
  await replica.dispose();
  await primary.dispose();
});

describe('redis store: wait for replicas', () => {
  // Each test starts with the replica online, whatever the previous one paused.
  beforeEach(untilLinked);

  it('with a live replica, run returns only once the replica holds the outcome; a replay sends no WAIT', async () => {
    const store = redisStore({ client, wait });
    const engine = createIdempotency({ store });
    const before = await readCommandStats(client);
    const first = await engine.run(request('live'), async () => ({ status: 201, body: { id: 'pay_1' } }));
    expect(first.kind).toBe('executed');
    expect((await rawRecord(replicaClient, store.keyOf(scopeOf('live'))))?.state).toBe('succeeded');
    const firstCalls = diffCommandStats(before, await readCommandStats(client));
    // claim (SET NX GET), EXISTS + WAIT, then the complete script (EVAL: first use here) + WAIT in one pipeline.
    expect({ scripts: (firstCalls.eval ?? 0) + (firstCalls.evalsha ?? 0), exists: firstCalls.exists, wait: firstCalls.wait }).toEqual({ scripts: 1, exists: 1, wait: 2 });

    const middle = await readCommandStats(client);
    expect((await engine.run(request('live'), async () => ({ status: 500 }))).kind).toBe('replayed');
    const replayCalls = diffCommandStats(middle, await readCommandStats(client));
    expect(replayCalls.set).toBe(1);
    expect(replayCalls.wait).toBeUndefined();
  });

  it('when no replica acknowledges a claim, the handler never runs and the caller gets a StorageError', async () => {
    const engine = createIdempotency({ store: redisStore({ client, wait }) });
    let executions = 0;
    const error = await withReplicaPaused(() =>
      engine.run(request('unacknowledged-claim'), async () => {
        executions += 1;
        return { status: 201 };
      }),
    ).catch((e: unknown) => e);
    expect(isStorageError(error)).toBe(true);
    expect((error as Error).message).toMatch(/claim failed: the claim reached the primary, but only 0 of 1 replicas acknowledged it/);
    expect(executions).toBe(0);
    // The claim stays on the primary until its lease lapses: a retry meanwhile is told to wait.
    expect((await engine.run(request('unacknowledged-claim'), async () => ({ status: 201 }))).kind).toBe('in_progress');
  });

  it('an unacknowledged complete fails, and the same owner’s retry succeeds once the replica catches up', async () => {
    const store = redisStore({ client, wait });
    const scope = scopeOf('unacknowledged-complete');
    await store.claim({ scope, fingerprint: 'f', token: 'owner', leaseMs: 60_000, retentionMs: 600_000 });
    const complete = () => store.complete({ scope, token: 'owner', state: 'succeeded', response: { status: 201 }, retentionMs: 600_000 });
    const error = await withReplicaPaused(complete).catch((e: unknown) => e);
    expect(isStorageError(error)).toBe(true);
    expect((await rawRecord(client, store.keyOf(scope)))?.state).toBe('succeeded');
    await untilLinked();
    expect(await complete()).toBe('ok');
    expect((await rawRecord(replicaClient, store.keyOf(scope)))?.state).toBe('succeeded');
    // Confirmed once: the outcome is final again, for its owner too.
    expect(await complete()).toBe('fence_lost');
    expect(await store.complete({ scope, token: 'stranger', state: 'succeeded', response: { status: 201 }, retentionMs: 600_000 })).toBe('fence_lost');
  });

  it('an extension no replica acknowledges fails with a StorageError, and succeeds once the replica is back', async () => {
    const store = redisStore({ client, wait });
    const scope = scopeOf('unacknowledged-extend');
    await store.claim({ scope, fingerprint: 'f', token: 'owner', leaseMs: 60_000, retentionMs: 600_000 });
    const leaseUntil = async (on: typeof client) => (await rawRecord(on, store.keyOf(scope)))?.leaseUntil;
    // A fresh claim's lease follows from the key's expiry; the first extend writes it out.
    const before = (await client.pexpiretime(store.keyOf(scope))) - 600_000 + 60_000;
    const error = await withReplicaPaused(() => store.extend({ scope, token: 'owner', leaseMs: 120_000 })).catch((e: unknown) => e);
    expect(isStorageError(error)).toBe(true);
    expect((error as Error).message).toMatch(/extend failed: the lease extension reached the primary, but only 0 of 1/);
    expect(await leaseUntil(client)).toBeGreaterThan(before);
    await untilLinked();
    expect(await store.extend({ scope, token: 'owner', leaseMs: 120_000 })).toBe('ok');
    expect(await leaseUntil(replicaClient)).toBe(await leaseUntil(client));
    expect(await store.extend({ scope, token: 'stranger', leaseMs: 120_000 })).toBe('fence_lost');
  });

  it('through the engine, a complete retried after the replica resumes records the outcome once', async () => {
    const events: EngineEvent[] = [];
    let paused = false;
    const engine = createIdempotency({
      store: redisStore({ client, wait }),
      onEvent: (event) => {
        events.push(event);
        // The first complete timed out waiting: let the replica catch up before the engine retries.
        if (event.type === 'storage_error' && paused) {
          paused = false;
          replica.resume();
        }
      },
    });
    let executions = 0;
    const result = await engine.run(request('engine-retry'), async () => {
      executions += 1;
      replica.pause();
      paused = true;
      return { status: 201, body: { id: 'pay_9' } };
    });
    expect(result.kind).toBe('executed');
    expect(executions).toBe(1);
    expect(events.filter((event) => event.type === 'storage_error').length).toBe(1);
    expect(events.some((event) => event.type === 'fence_lost')).toBe(false);
    expect((await rawRecord(replicaClient, redisStore({ client }).keyOf(scopeOf('engine-retry'))))?.response).toEqual({
      status: 201,
      body: { id: 'pay_9' },
    });
  });
});
