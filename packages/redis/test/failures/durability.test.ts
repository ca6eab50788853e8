import { setTimeout as sleep } from 'node:timers/promises';
import { createIdempotency } from '@oncely/core';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisStore } from '../../src/index.js';
import { startPrivateServer } from '../servers/private-server.js';

const untilReady = (redis: Redis) =>
  redis.status === 'ready' ? Promise.resolve() : new Promise<void>((resolve) => redis.once('ready', () => resolve()));

/**
 * Resolves once Redis has handed its whole AOF buffer to the kernel, which a process crash does not lose.
 * Under `everysec` a disk still busy with the previous fsync lets Redis postpone that write, for up to
 * 2 s, after it already replied (README, Durability): the test waits out that window rather than race it.
 */
async function untilAofWritten(client: Redis): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!/^aof_buffer_length:0\s*$/m.test(await client.info('persistence'))) {
    if (Date.now() > deadline) throw new Error('redis-server kept its AOF buffer unwritten for 10 s');
    await sleep(50);
  }
}

/**
 * Completes one request and leaves another in progress, SIGKILLs redis-server, restarts it with the
 * same settings, and retries both. Returns what the retries did and how often each handler ran.
 */
async function crashAndRetry(settings: readonly string[]) {
  const server = await startPrivateServer(settings);
  const client = new Redis(server.url, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
  // Reconnection errors while the server is down are expected here.
  client.on('error', () => undefined);
  try {
    const engine = createIdempotency({ store: redisStore({ client }), leaseMs: 60_000 });
    const executions = { done: 0, held: 0 };
    const request = (key: string) => ({ tenant: 'acme', operation: 'payments.create.v1', key, request: { amount: '10.00' } });
    const handler = (key: 'done' | 'held') => async () => {
      executions[key] += 1;
      return { status: 201, body: { key } };
    };
    await engine.run(request('done'), handler('done'));
    // A claim whose owner is still working when Redis crashes (the owner is simulated by the raw claim).
    await redisStore({ client }).claim({
      scope: { tenant: 'acme', principal: '', operation: 'payments.create.v1', key: 'held' },
      fingerprint: (await engine.get(request('done')))!.fingerprint,
      token: 'still-working',
      leaseMs: 60_000,
      retentionMs: 86_400_000,
    });
    // Under `always` the buffer is already written when Redis replies; without AOF there is none to wait for.
    if (settings.includes('--appendonly')) await untilAofWritten(client);
    await server.stop('SIGKILL');
    await server.restart();
    await untilReady(client);
    const done = (await engine.run(request('done'), handler('done'))).kind;
    const held = (await engine.run(request('held'), handler('held'))).kind;
    return { done, held, executions };
  } finally {
    client.disconnect();
    await server.dispose();
  }
}

describe('redis store: what survives a crash of redis-server (README, Durability)', () => {
  it('without persistence a crash forgets every record: completed work runs again and a held key is free', async () => {
    const result = await crashAndRetry([]);
    expect(result).toEqual({ done: 'executed', held: 'executed', executions: { done: 2, held: 1 } });
  });

  it('with AOF everysec a process crash keeps acknowledged records: replay, and the held lease still blocks', async () => {
    const result = await crashAndRetry(['--appendonly', 'yes', '--appendfsync', 'everysec']);
    expect(result).toEqual({ done: 'replayed', held: 'in_progress', executions: { done: 1, held: 0 } });
  });

  it('with AOF always a crash keeps every acknowledged record: replay, and the held lease still blocks', async () => {
    const result = await crashAndRetry(['--appendonly', 'yes', '--appendfsync', 'always']);
    expect(result).toEqual({ done: 'replayed', held: 'in_progress', executions: { done: 1, held: 0 } });
  });
});
