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
  // The raw record behind the store's back: proves what reached Redis, and that released keys are gone.
  inspect: async (store, scope) => {
    const raw = await plain.get(store.keyOf(scope));
    return raw === null ? undefined : { state: (JSON.parse(raw) as { state: string }).state };
  },
});

runStoreConformance({ describe, it, expect }, {
  name: 'redis (ioredis enableAutoPipelining)',
  createStore: () => redisStore({ client: autoPipelined, prefix: pipelinedPrefix }),
});
