import type { Redis } from 'ioredis';

/** Deletes the demo's keys, and only those: SCAN by prefix, never FLUSHDB on a shared server. */
export async function deleteKeysWithPrefix(client: Redis, prefix: string): Promise<number> {
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) deleted += await client.del(...keys);
  } while (cursor !== '0');
  return deleted;
}
