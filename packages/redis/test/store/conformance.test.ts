import { runStoreConformance } from '@oncely/testkit';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { redisStore } from '../../src/index.js';
import { deleteByPrefix, REDIS_URL, runPrefix } from '../servers/shared-server.js';

const plain = new Redis(REDIS_URL);
const autoPipelined = new Redis(REDIS_URL, { enableAutoPipelining: true });
const prefix = runPrefix('conformance');
const pipelinedPrefix = runPrefix('conformance-autopipelining');

afterAll(async () => {
  await deleteByPrefix(plain, prefix);
  await deleteByPrefix(plain, pipelinedPrefix);
  await Promise.all([plain.quit(), autoPipelined.quit()]);
});

runStoreConformance({ describe, it, expect }, {
  name: 'redis (ioredis)',
  createStore: () => redisStore({ client: plain, prefix }),
});

runStoreConformance({ describe, it, expect }, {
  name: 'redis (ioredis enableAutoPipelining)',
  createStore: () => redisStore({ client: autoPipelined, prefix: pipelinedPrefix }),
});
