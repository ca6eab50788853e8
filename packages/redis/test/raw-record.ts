import type { Cluster, Redis } from 'ioredis';

/** The record behind the store's back, as the JSON string Redis holds; undefined when the key is absent. */
export async function rawRecord(client: Redis | Cluster, key: string): Promise<Record<string, unknown> | undefined> {
  const raw = await client.get(key);
  return raw === null ? undefined : (JSON.parse(raw) as Record<string, unknown>);
}
