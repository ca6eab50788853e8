import { randomUUID } from 'node:crypto';
import type { OutboxEvent } from '@oncely/core/outbox';
import { Redis } from 'ioredis';
import type { StreamConsumerEvent, StreamHandler } from '../../src/index.js';

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

let sequence = 0;
/** An outbox event as a relay would hand it to the publisher. */
export function eventOf(aggregateId: string, aggregateSeq: number, payload: unknown = { n: aggregateSeq }): OutboxEvent {
  sequence += 1;
  return {
    eventId: `evt-${sequence}-${randomUUID()}`,
    aggregateType: 'account',
    aggregateId,
    aggregateSeq,
    eventType: 'account.credited.v1',
    payload,
    createdAt: new Date(Date.UTC(2026, 0, 1, 12, 0, 0, sequence % 1000)),
  };
}

/**
 * A consumer's state kept in memory with its own inbox: what it applied, in order. `fail` lets a
 * test make the handler throw for chosen deliveries.
 */
export function ledger(fail: (event: OutboxEvent) => boolean = () => false) {
  const inbox = new Set<string>();
  const applied: OutboxEvent[] = [];
  const handle: StreamHandler = async (event) => {
    if (fail(event)) throw new Error(`handler refused ${event.eventId}`);
    if (inbox.has(event.eventId)) return 'duplicate';
    inbox.add(event.eventId);
    applied.push(event);
    return 'processed';
  };
  return { inbox, applied, handle };
}

/** Collects a consumer's events. */
export function recorder() {
  const events: StreamConsumerEvent[] = [];
  return { events, onEvent: (event: StreamConsumerEvent) => events.push(event) };
}

/** Waits until `check` holds (state, not time, is what the tests assert); fails after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** How many entries of `group` are delivered and not yet acknowledged. */
export async function pendingCount(client: Redis, stream: string, group: string): Promise<number> {
  const [count] = (await client.xpending(stream, group)) as [number, ...unknown[]];
  return Number(count);
}
