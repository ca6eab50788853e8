import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** What a floor route answers: the route's own payment, a replay of the first answer, or 409 while it runs. */
export interface FloorAnswer {
  readonly status: 201 | 409;
  readonly body: unknown;
}

/**
 * The least any idempotency layer must do per request, with no contract around it: a SHA-256 of the
 * body, a lookup of the key and a write of the answer. The floor rows put the route plus only this
 * next to the route with oncely, so the table shows which overhead targets any layer could reach.
 */
export interface StoreFloor {
  serve(key: string, body: unknown, route: () => unknown): Promise<FloorAnswer>;
}

const RETENTION_MS = 86_400_000;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Memory: one `Map` get and one set per first request; a repeated key answers the stored value. */
export function memoryFloor(): StoreFloor {
  const answers = new Map<string, { readonly fingerprint: string; readonly body: unknown }>();
  return {
    async serve(key, body, route) {
      const fingerprint = sha256(JSON.stringify(body));
      const prior = answers.get(key);
      if (prior) return { status: 201, body: prior.body };
      const answer = route();
      answers.set(key, { fingerprint, body: answer });
      return { status: 201, body: answer };
    },
  };
}

/**
 * Redis: one `SET NX GET` (claims the key, or returns what it holds) and one `SET` of the answer, with
 * the raw client the store uses; a repeated key gets the stored answer, or 409 while it is a claim.
 */
export function redisFloor(client: Redis, prefix: string): StoreFloor {
  return {
    async serve(key, body, route) {
      const name = prefix + key;
      const prior = await client.set(name, sha256(JSON.stringify(body)), 'PX', RETENTION_MS, 'NX', 'GET');
      if (prior !== null) return prior.startsWith('{') ? { status: 201, body: JSON.parse(prior) } : { status: 409, body: {} };
      const answer = route();
      await client.set(name, JSON.stringify(answer), 'PX', RETENTION_MS);
      return { status: 201, body: answer };
    },
  };
}
