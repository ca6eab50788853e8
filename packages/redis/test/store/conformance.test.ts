import { runStoreConformance } from '@oncely/testkit';
import { Redis, type RedisOptions } from 'ioredis';
import ioredisPackage from 'ioredis/package.json' with { type: 'json' };
import { afterAll, describe, expect, it } from 'vitest';
import { redisStore } from '../../src/index.js';
import { deleteByPrefix, REDIS_URL, runPrefix } from '../servers/shared-server.js';

const plain = new Redis(REDIS_URL);
const autoPipelined = new Redis(REDIS_URL, { enableAutoPipelining: true });
const prefix = runPrefix('conformance');
const pipelinedPrefix = runPrefix('conformance-autopipelining');
// ioredis 6 speaks RESP3; `replyMapping: 'resp3'` also changes the shapes of some replies (ioredis 5 has neither).
const resp3 = Number(ioredisPackage.version.split('.')[0]) >= 6 ? new Redis(REDIS_URL, { replyMapping: 'resp3' } as RedisOptions) : undefined;
const resp3Prefix = runPrefix('conformance-resp3');

afterAll(async () => {
  await deleteByPrefix(plain, prefix);
  await deleteByPrefix(plain, pipelinedPrefix);
  await deleteByPrefix(plain, resp3Prefix);
  await Promise.all([plain.quit(), autoPipelined.quit(), resp3?.quit()]);
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

if (resp3) {
  runStoreConformance({ describe, it, expect }, {
    name: `redis (ioredis ${ioredisPackage.version} replyMapping: 'resp3')`,
    createStore: () => redisStore({ client: resp3, prefix: resp3Prefix }),
  });
}
