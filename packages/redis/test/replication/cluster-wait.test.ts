import { createIdempotency, isStorageError, type Scope } from '@oncely/core';
import { type Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisStore, redisStore } from '../../src/index.js';
import { type PrivateCluster, startPrivateCluster } from '../servers/private-cluster.js';
import { rawRecord } from '../raw-record.js';

let cluster: PrivateCluster;
let client: Cluster;
let store: RedisStore;
const scopeOf = (key: string): Scope => ({ tenant: 'acme', principal: '', operation: 'payments.create.v1', key });

/** Thirty fresh scopes with the master and replica ports that serve each one. */
const placements = async (label: string) =>
  Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      const scope = scopeOf(`${label}-${i}`);
      return { scope, ...(await cluster.placement(store.keyOf(scope))) };
    }),
  );

beforeAll(async () => {
  cluster = await startPrivateCluster(1);
  client = cluster.connect();
  store = redisStore({ client, wait: { replicas: 1, timeoutMs: 500 } });
}, 60_000);

afterAll(async () => {
  await client?.quit().catch(() => undefined);
  await cluster?.dispose();
});

describe('redis cluster: wait for replicas', () => {
  it('WAIT reaches the master of the record’s slot: pausing that master’s replica fails its claims only', async () => {
    const placed = await placements('claims');
    const target = placed[0]!;
    const onTarget = placed.filter((p) => p.master === target.master).slice(0, 4);
    const elsewhere = placed.filter((p) => p.master !== target.master).slice(0, 4);
    expect([onTarget.length, elsewhere.length]).toEqual([4, 4]);
    const replica = cluster.servers.find((server) => server.port === target.replica)!;
    const claim = (scope: Scope) => store.claim({ scope, fingerprint: 'f', token: 'owner', leaseMs: 60_000, retentionMs: 600_000 });

    replica.pause();
    try {
      for (const { scope } of elsewhere) expect((await claim(scope)).kind).toBe('claimed');
      for (const { scope } of onTarget) {
        const error = await claim(scope).catch((e: unknown) => e);
        expect(isStorageError(error)).toBe(true);
        expect((error as Error).message).toMatch(/only 0 of 1 replicas acknowledged/);
      }
    } finally {
      replica.resume();
    }
  });

  it('with every replica live, each outcome is on its master’s replica by the time run returns', async () => {
    const engine = createIdempotency({ store });
    const onePerMaster = new Map((await placements('runs')).map((p) => [p.master, p]));
    expect(onePerMaster.size).toBe(3);
    for (const { scope, replica } of onePerMaster.values()) {
      const result = await engine.run({ ...scope, request: {} }, async () => ({ status: 201, body: { master: 'ok' } }));
      expect(result.kind).toBe('executed');
      const direct = new Redis({ host: '127.0.0.1', port: replica! });
      try {
        // A cluster replica serves reads only to a connection that asked for READONLY.
        await direct.readonly();
        expect((await rawRecord(direct, store.keyOf(scope)))?.state).toBe('succeeded');
      } finally {
        direct.disconnect();
      }
    }
  });
});
