import { createIdempotency } from '@oncely/core';
import { redisStore } from '@oncely/redis';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { type Binding, bindings } from '../support/bindings.js';
import {
  expectClean,
  faultOnce,
  killRedisClients,
  paymentRows,
  paymentsRoute,
  privateRedis,
  runName,
  runStorm,
  type Storm,
  stormResources,
} from '../support/storms.js';

/**
 * Redis storms through real HTTP, lease mode (the Redis store has no transactions; the payments live
 * in PostgreSQL, which the storm leaves alone): the store's connections killed with `CLIENT KILL ID`
 * every 30 ms on the shared server (only clients named by this run), and a private redis-server
 * SIGKILLed and restarted mid-run (append-only, fsync always: it loses nothing it acknowledged).
 */

const SHARED_REDIS = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const binding = (name: Binding['name']) => bindings.find((candidate) => candidate.name === name)!;

const resources = stormResources();
afterAll(() => resources.dispose());

/** The store's own client, named so the storm kills it and nothing else; the error listener a service adds. */
function storeClient(port: number, connectionName: string): Redis {
  const client = new Redis({ host: '127.0.0.1', port, connectionName, lazyConnect: false });
  client.on('error', () => undefined);
  resources.defer(async () => client.disconnect());
  return client;
}

describe('Redis store, lease mode', () => {
  it('CLIENT KILL every 30 ms on the store’s connections, fetch: no crash, no 500, one payment per key', async () => {
    const name = runName('storm_redis_kill');
    const port = Number(SHARED_REDIS.port || 6379);
    const client = storeClient(port, name);
    const prefix = `oncely-test:${name}:`;
    resources.defer(async () => {
      const cleaner = new Redis({ host: '127.0.0.1', port });
      let cursor = '0';
      do {
        const [next, keys] = await cleaner.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) await cleaner.unlink(key);
      } while (cursor !== '0');
      cleaner.disconnect();
    });
    const business = await resources.business(name);
    const report = await runStorm({
      name,
      binding: binding('fetch'),
      engine: createIdempotency({ store: redisStore({ client, prefix }) }),
      route: paymentsRoute(name, 'lease', business),
      keys: 100,
      duplicates: 3,
      concurrency: 8,
      fault: async (): Promise<Storm> => killRedisClients(port, name, 30),
      stormMs: 4_000,
      settleMs: 3_000,
      rows: () => paymentRows(business, name),
    });
    expectClean(report);
    expect(report.killed).toBeGreaterThan(20);
  }, 30_000);

  it('a private redis-server SIGKILLed and restarted mid-run, Express: no crash, no 500, one payment per key', async () => {
    const server = await privateRedis();
    resources.defer(() => server.dispose());
    const name = runName('storm_redis_restart');
    const client = storeClient(server.port, name);
    const business = await resources.business(name);
    const report = await runStorm({
      name,
      binding: binding('express'),
      engine: createIdempotency({ store: redisStore({ client }) }),
      route: paymentsRoute(name, 'lease', business),
      keys: 100,
      duplicates: 3,
      concurrency: 8,
      fault: async (progress) => faultOnce(progress, 20, () => server.killAndRestart(500)),
      stormMs: 4_000,
      settleMs: 3_000,
      rows: () => paymentRows(business, name),
    });
    expectClean(report);
    expect(report.killed).toBe(1);
  }, 30_000);
});
