import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { redisStreamConsumer } from '../../src/index.js';
import { type PrivateServer, startPrivateServer } from '../servers/private-server.js';

/**
 * stop() while the server is gone: the consumer's read then waits in ioredis's queue for a reconnect
 * that stop() itself cancels, and ioredis never settles it. stop() must not wait on that read.
 */

it('stop() returns while the server is down and the read waits for a reconnect', async () => {
  const server: PrivateServer = await startPrivateServer();
  const client = new Redis(server.url, { maxRetriesPerRequest: null, retryStrategy: () => 200 });
  client.on('error', () => undefined);
  try {
    const consumer = redisStreamConsumer({
      client,
      stream: 'stop-events',
      group: 'g',
      consumer: 'c1',
      blockMs: 50,
      backoff: { baseMs: 20, capMs: 100 },
      handle: async () => 'processed',
    });
    await consumer.start();
    await sleep(150);
    await server.stop('SIGKILL');
    // The connection is now reconnecting, every 200 ms, to nothing; the consumer's reads queue up.
    await sleep(500);
    const stopped = await Promise.race([consumer.stop().then(() => 'stopped'), sleep(5_000).then(() => 'still waiting')]);
    expect(stopped).toBe('stopped');
    expect(consumer.status).toBe('stopped');
  } finally {
    client.disconnect();
    await server.dispose();
  }
}, 30_000);
