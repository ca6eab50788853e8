import type { Redis } from 'ioredis';
import type { Operations } from '../subjects/operations.js';
import type { PaymentEffect } from '../subjects/payment-effect.js';

const LEASE_MS = 30_000;
const RETENTION_MS = 86_400_000;

/**
 * The physical limit: plain ioredis doing the round trips oncely needs and nothing else. A first
 * request is `SET NX PX` (claim) and `SET PX` (complete), a replay is one `GET`. Values have the
 * size of oncely's records. It is not a correct idempotency layer (no fencing, no fingerprint
 * check): it is the floor every implementation is measured against.
 */
export function rawIoredisOperations(client: Redis, prefix: string, effect: PaymentEffect, name: string): Operations {
  const fingerprint = 'f'.repeat(64);
  return {
    name,
    async first(key) {
      const redisKey = `${prefix}:raw:{${key}}`;
      const claimed = await client.set(
        redisKey,
        JSON.stringify({ state: 'in_progress', fingerprint, token: crypto.randomUUID(), fence: 1 }),
        'PX',
        LEASE_MS,
        'NX',
      );
      if (claimed !== 'OK') throw new Error(`bench: raw claim of ${key} found an existing key`);
      const response = await effect.forKey(key)();
      await client.set(redisKey, JSON.stringify({ state: 'succeeded', fingerprint, fence: 1, response }), 'PX', RETENTION_MS);
    },
    async replay(key) {
      const stored = await client.get(`${prefix}:raw:{${key}}`);
      if (stored === null) throw new Error(`bench: raw replay of ${key} found nothing`);
      JSON.parse(stored);
    },
    settle: async () => undefined,
    close: async () => undefined,
  };
}
