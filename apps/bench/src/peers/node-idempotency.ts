import { Idempotency, IdempotencyError, IdempotencyErrorCodes } from '@node-idempotency/core';
import { RedisStorageAdapter } from '@node-idempotency/storage-adapter-redis';
import { type IdempotentSubject, PAYMENT_REQUEST } from '../subjects/subject.js';

/**
 * `@node-idempotency/core` with its Redis adapter (node-redis 4), driven as its README shows:
 * `onRequest` before the handler (SET NX, then GET when the key exists), `onResponse` after (SET).
 */
export async function nodeIdempotencySubject(redisUrl: string, prefix: string): Promise<IdempotentSubject> {
  const storage = new RedisStorageAdapter({ url: redisUrl });
  await storage.connect();
  const idempotency = new Idempotency(storage, { cacheKeyPrefix: `${prefix}:node-idempotency` });
  return {
    name: '@node-idempotency/core',
    async execute(key, effect) {
      const request = {
        method: 'POST',
        path: '/payments',
        headers: { 'idempotency-key': key },
        body: { ...PAYMENT_REQUEST },
      };
      let cached: unknown;
      try {
        cached = await idempotency.onRequest(request);
      } catch (error) {
        if (error instanceof IdempotencyError && error.code === IdempotencyErrorCodes.REQUEST_IN_PROGRESS) {
          return { kind: 'in_progress' };
        }
        if (error instanceof IdempotencyError) return { kind: 'rejected', reason: error.code };
        throw error;
      }
      if (cached !== undefined) return { kind: 'replayed' };
      const response = await effect();
      await idempotency.onResponse(request, { body: response.body, additional: { status: response.status } });
      return { kind: 'executed' };
    },
    settle: async () => undefined,
    close: () => storage.disconnect(),
  };
}
