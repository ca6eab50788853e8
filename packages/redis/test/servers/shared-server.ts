import { randomUUID } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';

/** The shared Redis every engineer's tests use: never flushed, only our own prefixed keys are touched. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix no other run uses, so runs never see each other's records. */
export const runPrefix = (label: string) => `oncely-test:${label}:${randomUUID().slice(0, 8)}:`;

/** Deletes every key under `prefix` (and only those), on each master of a Cluster. */
export async function deleteByPrefix(client: Redis | Cluster, prefix: string): Promise<number> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  let deleted = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      // One UNLINK per key: in a Cluster, keys of different slots cannot share a command.
      for (const key of keys) deleted += await node.unlink(key);
    } while (cursor !== '0');
  }
  return deleted;
}

/** Every key under `prefix`, across the masters of a Cluster. */
export async function keysByPrefix(client: Redis | Cluster, prefix: string): Promise<string[]> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  const found: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return found;
}
