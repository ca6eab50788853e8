import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawIoredisOperations } from '../src/redis/raw-ioredis.js';
import { type PrivateRedis, startPrivateRedis } from '../src/servers/private-redis.js';
import { commandDelta, countRedisCommands, parseCommandStats } from '../src/servers/redis-command-counter.js';
import { paymentEffect } from '../src/subjects/payment-effect.js';

let redis: PrivateRedis;
let client: Redis;

beforeAll(async () => {
  redis = await startPrivateRedis(Number(process.env.BENCH_TEST_REDIS_PORT ?? 7250));
  client = new Redis(redis.url);
});

afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});

describe('Redis command counting', () => {
  it('parses INFO commandstats into calls plus rejected calls and diffs two snapshots', () => {
    const before = parseCommandStats('# Commandstats\r\ncmdstat_get:calls=2,usec=5,usec_per_call=2.5,rejected_calls=1,failed_calls=0\r\n');
    const after = parseCommandStats(
      'cmdstat_get:calls=5,usec=9,rejected_calls=1,failed_calls=0\r\ncmdstat_info:calls=9,usec=1\r\ncmdstat_set:calls=2,usec=1\r\n',
    );
    expect(before.get('get')).toBe(3);
    expect([...commandDelta(before, after)]).toEqual([
      ['get', 3],
      ['set', 2],
    ]);
  });

  it('counts the raw baseline at 2 commands per first request and 1 per replay', async () => {
    const effect = paymentEffect(false);
    const ops = rawIoredisOperations(client, 'count-test', effect, 'raw');
    const first = await countRedisCommands(redis.url, async () => {
      for (let i = 0; i < 25; i++) await ops.first(`k${i}`);
    });
    expect(Object.fromEntries(first.sent)).toEqual({ set: 50 });
    expect(Object.fromEntries(first.executed)).toEqual({ set: 50 });
    expect(effect.total).toBe(25);
    const replay = await countRedisCommands(redis.url, async () => {
      for (let i = 0; i < 25; i++) await ops.replay(`k${i}`);
    });
    expect(Object.fromEntries(replay.sent)).toEqual({ get: 25 });
  });

  it('tells a script round trip from the commands the script runs inside the server', async () => {
    const traffic = await countRedisCommands(redis.url, async () => {
      await client.eval("redis.call('set', KEYS[1], '1'); redis.call('get', KEYS[1]); return 1", 1, 'lua-test');
    });
    expect(Object.fromEntries(traffic.sent)).toEqual({ eval: 1 });
    expect(traffic.scriptInternal).toBe(2);
    expect(Object.fromEntries(traffic.executed)).toEqual({ eval: 1, set: 1, get: 1 });
  });

  it('does not count commands sent after the work finished', async () => {
    const traffic = await countRedisCommands(redis.url, async () => {
      await client.set('before-end', '1');
    });
    await Promise.all(Array.from({ length: 20 }, (_, i) => client.set(`after-end-${i}`, '1')));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(Object.fromEntries(traffic.sent)).toEqual({ set: 1 });
  });
});
