import { randomUUID } from 'node:crypto';
import type { OutboxEvent } from '@oncely/core/outbox';
import { Redis } from 'ioredis';
import { eventOf as sharedEventOf, recorder as sharedRecorder, until as sharedUntil } from '@oncely/test-support';
import type { StreamConsumerEvent } from '../../src/index.js';

/** The shared Redis: never flushed; these tests touch only keys under their own run prefix. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix no other run uses. */
export const streamPrefix = () => `oncely-test:streams:${randomUUID().slice(0, 8)}:`;

/** A client for the shared Redis. */
export const connect = () => new Redis(REDIS_URL, { lazyConnect: false });

/** Deletes every key under `prefix`, and only those. */
export async function cleanUp(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.unlink(...keys);
  } while (cursor !== '0');
}

export { ledger } from '@oncely/test-support';

/** An outbox event as a relay would hand it to the publisher, with `payload` as given. */
export const eventOf = (aggregateId: string, aggregateSeq: number, payload: unknown = { n: aggregateSeq }): OutboxEvent =>
  sharedEventOf(aggregateId, aggregateSeq, { payload });

/** Collects a consumer's events. */
export const recorder = () => sharedRecorder<StreamConsumerEvent>();

/** Waits until `check` holds (state, not time, is what the tests assert); fails after `timeoutMs`. */
export const until = (check: () => boolean | Promise<boolean>, timeoutMs = 15_000) => sharedUntil('condition', check, timeoutMs);

/** How many entries of `group` are delivered and not yet acknowledged. */
export async function pendingCount(client: Redis, stream: string, group: string): Promise<number> {
  const [count] = (await client.xpending(stream, group)) as [number, ...unknown[]];
  return Number(count);
}
