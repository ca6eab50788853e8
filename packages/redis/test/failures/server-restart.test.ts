import { createIdempotency, isStorageError } from '@oncely/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStore } from '../../src/index.js';
import { type PrivateServer, startPrivateServer } from '../servers/private-server.js';

let server: PrivateServer;
let client: Redis;
const connectionErrors: Error[] = [];

beforeAll(async () => {
  server = await startPrivateServer();
  // Fail fast while Redis is away instead of queueing commands: the README's recommended settings.
  client = new Redis(server.url, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
  client.on('error', (error: Error) => connectionErrors.push(error));
  await client.ping();
});

afterAll(async () => {
  client.disconnect();
  await server.dispose();
});

const untilReady = (redis: Redis) =>
  redis.status === 'ready' ? Promise.resolve() : new Promise<void>((resolve) => redis.once('ready', () => resolve()));

describe('redis store: Redis stops and restarts mid-run', () => {
  it('a storage failure surfaces as StorageError, no handler runs without a claim, and it works again after the restart', async () => {
    const store = redisStore({ client });
    const engine = createIdempotency({ store, leaseMs: 30_000 });
    const executions: string[] = [];
    const request = (key: string) => ({ tenant: 'acme', operation: 'payments.create.v1', key, request: { amount: '10.00' } });
    const handler = (key: string, during?: () => Promise<void>) => async () => {
      executions.push(key);
      await during?.();
      return { status: 201, body: { key } };
    };

    expect((await engine.run(request('before'), handler('before'))).kind).toBe('executed');

    // Redis dies while a handler runs: the side effect happened, its outcome cannot be saved.
    const midRun = await engine
      .run(request('mid-run'), handler('mid-run', () => server.stop('SIGKILL')))
      .catch((error: unknown) => error);
    expect(isStorageError(midRun)).toBe(true);
    expect((midRun as { operation?: string }).operation).toBe('complete');

    // While Redis is down nothing can be claimed, so nothing executes (fail closed).
    const down = await engine.run(request('while-down'), handler('while-down')).catch((error: unknown) => error);
    expect(isStorageError(down)).toBe(true);
    expect((down as { operation?: string }).operation).toBe('claim');
    expect(isStorageError(await store.get({ ...request('before'), principal: '' }).catch((error: unknown) => error))).toBe(true);
    expect(executions).toEqual(['before', 'mid-run']);

    expect(connectionErrors.length).toBeGreaterThan(0);
    await server.restart();
    await untilReady(client);
    expect((await engine.run(request('while-down'), handler('while-down'))).kind).toBe('executed');
    expect((await engine.run(request('while-down'), handler('while-down'))).kind).toBe('replayed');
    expect(executions).toEqual(['before', 'mid-run', 'while-down']);
  });
});
