import { OncelyError } from '@oncely/core';
import { integerOption, type OutboxEvent, type PublishOutcome, type Publisher } from '@oncely/core/adapter';
import type { Cluster, Redis } from 'ioredis';
import { toStreamFields } from './stream-entry.js';

/** Options of {@link redisStreamPublisher}. */
export interface RedisStreamPublisherOptions {
  /** An ioredis `Redis` or `Cluster` you own: the publisher never closes it. */
  readonly client: Redis | Cluster;
  /**
   * The stream key, or a function choosing one per event. Route by aggregate (never by event) so each
   * aggregate's events share a stream and keep their order, e.g. `(e) => \`orders:${partitionOf(e.aggregateId, 4)}\``.
   */
  readonly stream: string | ((event: OutboxEvent) => string);
  /**
   * Approximate cap on each stream's length (`XADD MAXLEN ~`). Off by default: trimming drops entries
   * whether or not every consumer group has read them.
   */
  readonly maxLen?: number;
}

/**
 * A {@link Publisher} that appends each event to a Redis stream with `XADD`, one pipeline (one round
 * trip) per stream and batch. Every entry carries the event's `eventId` (and its headers, the trace
 * context, as a `headers` field; a header that is not a string fails the event), so consumers deduplicate
 * what a relay republishes after a crash: delivery is at-least-once. An event counts as published
 * when Redis answered its XADD; with replicas, that is before they have it (see the Redis docs on
 * `WAIT`).
 */
export function redisStreamPublisher(options: RedisStreamPublisherOptions): Publisher {
  const { client, stream, maxLen } = options;
  if (!client || typeof client.pipeline !== 'function') {
    throw new OncelyError('invalid_option', 'oncely/redis: redisStreamPublisher needs an ioredis Redis or Cluster client');
  }
  if (typeof stream !== 'function' && (typeof stream !== 'string' || stream.length === 0)) {
    throw new OncelyError('invalid_option', 'oncely/redis: stream must be a non-empty string or a function of the event');
  }
  if (maxLen !== undefined) integerOption('oncely/redis: maxLen', maxLen);
  const trim = maxLen === undefined ? [] : ['MAXLEN', '~', String(maxLen)];
  const streamOf = typeof stream === 'string' ? () => stream : stream;

  async function publishTo(key: string, events: readonly { event: OutboxEvent; index: number }[], outcomes: PublishOutcome[]) {
    const pipeline = client.pipeline();
    const sent: { event: OutboxEvent; index: number }[] = [];
    for (const entry of events) {
      try {
        pipeline.xadd(key, ...trim, '*', ...toStreamFields(entry.event));
        sent.push(entry);
      } catch (error) {
        outcomes[entry.index] = { kind: 'failed', error };
      }
    }
    if (sent.length === 0) return;
    try {
      const replies = (await pipeline.exec()) ?? [];
      sent.forEach(({ index }, position) => {
        const [error] = replies[position] ?? [new Error('no reply for this XADD')];
        outcomes[index] = error ? { kind: 'failed', error } : { kind: 'published' };
      });
    } catch (error) {
      for (const { index } of sent) outcomes[index] = { kind: 'failed', error };
    }
  }

  return {
    name: 'redis-streams',
    async publish(events) {
      const outcomes: PublishOutcome[] = new Array(events.length);
      const byStream = new Map<string, { event: OutboxEvent; index: number }[]>();
      events.forEach((event, index) => {
        let key: string;
        try {
          key = streamOf(event);
        } catch (error) {
          outcomes[index] = { kind: 'failed', error };
          return;
        }
        const group = byStream.get(key);
        if (group) group.push({ event, index });
        else byStream.set(key, [{ event, index }]);
      });
      // A Cluster cannot pipeline keys of different slots together: one pipeline per stream.
      await Promise.all([...byStream].map(([key, group]) => publishTo(key, group, outcomes)));
      return outcomes;
    },
  };
}

/**
 * A stable partition number in `[0, partitions)` for an aggregate id (FNV-1a), for routing an
 * aggregate's events to one of several streams.
 */
export function partitionOf(aggregateId: string, partitions: number): number {
  integerOption('oncely/redis: partitions', partitions);
  let hash = 0x811c9dc5;
  for (let i = 0; i < aggregateId.length; i++) {
    hash ^= aggregateId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}
