import { runStoreConformance } from '@oncely/testkit';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStore } from '../../src/index.js';
import { type PrivateCluster, startPrivateCluster } from '../servers/private-cluster.js';
import { keysByPrefix, runPrefix } from '../servers/shared-server.js';

let cluster: PrivateCluster;
let client: Cluster;
let pipelined: Cluster;
const prefix = runPrefix('cluster');
const pipelinedPrefix = runPrefix('cluster-autopipelining');

beforeAll(async () => {
  cluster = await startPrivateCluster();
  client = cluster.connect();
  pipelined = cluster.connect({ enableAutoPipelining: true });
}, 60_000);

afterAll(async () => {
  await Promise.allSettled([client?.quit(), pipelined?.quit()]);
  await cluster?.dispose();
});

runStoreConformance({ describe, it, expect }, {
  name: 'redis cluster (3 masters)',
  createStore: () => redisStore({ client, prefix }),
});

runStoreConformance({ describe, it, expect }, {
  name: 'redis cluster (3 masters, enableAutoPipelining)',
  createStore: () => redisStore({ client: pipelined, prefix: pipelinedPrefix }),
  numRuns: 15,
});

describe('redis cluster: placement', () => {
  it('the records the suites left are spread over many slots and every master', async () => {
    const perMaster = await Promise.all(
      client.nodes('master').map(async (node) => {
        const keys = [...(await keysByPrefix(node, prefix)), ...(await keysByPrefix(node, pipelinedPrefix))];
        const slots = await Promise.all(keys.map((key) => node.cluster('KEYSLOT', key)));
        return { keys: keys.length, slots };
      }),
    );
    const slots = new Set(perMaster.flatMap((master) => master.slots));
    expect(perMaster.length).toBe(3);
    for (const master of perMaster) expect(master.keys).toBeGreaterThan(10);
    // Hundreds of records over 16 384 slots: near one slot per record, never a single hot slot.
    expect(slots.size).toBeGreaterThan(200);
    expect(slots.size).toBeGreaterThanOrEqual(perMaster.reduce((sum, master) => sum + master.keys, 0) * 0.9);
  });
});
