import { OncelyError } from '@oncely/core';
import { aggregateOf, integerOption, type OutboxEvent, type PublishOutcome, type Publisher } from '@oncely/core/adapter';
import type { Cluster, Redis } from 'ioredis';
import { toStreamFields } from './stream-entry.js';
import { streamScripts } from './stream-scripts.js';

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

/** An event ready to append: where it goes, its fields, and its aggregate. */
interface Entry {
  readonly index: number;
  readonly aggregate: string;
  readonly fields: readonly string[];
}

/** What the append script answered for one entry: its id, `[error]`, or 0 when it was not tried. */
type AppendReply = string | number | readonly [string];

/** Why an event was not sent: an earlier event of its aggregate failed in this batch. */
const heldBack = () =>
  new OncelyError('invalid_state', 'oncely/redis: not sent, an earlier event of its aggregate failed in this batch');

/**
 * A {@link Publisher} that appends each event to a Redis stream with `XADD`, one script call (one
 * round trip, atomic) per stream and batch. Every entry carries the event's `eventId` (and its headers,
 * the trace context, as a `headers` field; a header that is not a string fails the event), so consumers
 * deduplicate what a relay republishes after a crash: delivery is at-least-once. An event counts as
 * published when Redis answered its XADD; with replicas, that is before they have it (see the Redis
 * docs on `WAIT`). Once an event fails, no later event of its aggregate in the batch is sent (they are
 * answered failed, and the relay hands them back unattempted): events of an aggregate that a stream
 * function spreads over several streams go out one stream after the other, each after the previous
 * one answered.
 */
export function redisStreamPublisher(options: RedisStreamPublisherOptions): Publisher {
  const { client, stream, maxLen } = options;
  if (!client || typeof client.defineCommand !== 'function') {
    throw new OncelyError('invalid_option', 'oncely/redis: redisStreamPublisher needs an ioredis Redis or Cluster client');
  }
  if (typeof stream !== 'function' && (typeof stream !== 'string' || stream.length === 0)) {
    throw new OncelyError('invalid_option', 'oncely/redis: stream must be a non-empty string or a function of the event');
  }
  if (maxLen !== undefined) integerOption('oncely/redis: maxLen', maxLen);
  const trim = maxLen === undefined ? [] : ['MAXLEN', '~', String(maxLen)];
  const streamOf = typeof stream === 'string' ? () => stream : stream;
  streamScripts.register(client);

  /** Appends one stream's entries in order; an entry's failure stops the later entries of its aggregate there. */
  async function appendTo(key: string, entries: readonly Entry[], outcomes: PublishOutcome[], failed: Set<string>) {
    const args = [String(trim.length), ...trim];
    for (const entry of entries) args.push(entry.aggregate, String(entry.fields.length), ...entry.fields);
    let replies: readonly AppendReply[];
    try {
      replies = (await streamScripts.call(client, 'append', [key], args)) as AppendReply[];
      if (!Array.isArray(replies) || replies.length !== entries.length) throw new Error(`the append script answered ${replies?.length} replies for ${entries.length} entries`);
    } catch (error) {
      // No answer: any entry may or may not be in the stream; each counts as failed, and so does its aggregate.
      for (const entry of entries) {
        outcomes[entry.index] = { kind: 'failed', error };
        failed.add(entry.aggregate);
      }
      return;
    }
    entries.forEach((entry, position) => {
      const reply = replies[position];
      if (typeof reply === 'string') outcomes[entry.index] = { kind: 'published' };
      else {
        outcomes[entry.index] = { kind: 'failed', error: Array.isArray(reply) ? new Error(String(reply[0])) : heldBack() };
        failed.add(entry.aggregate);
      }
    });
  }

  return {
    name: 'redis-streams',
    async publish(events) {
      const outcomes: PublishOutcome[] = new Array(events.length);
      const failed = new Set<string>();
      // Rounds of appends: an aggregate moves to the next round whenever its stream changes, so its
      // events in another stream wait for the answer about the earlier ones.
      const rounds: Map<string, Entry[]>[] = [];
      const last = new Map<string, { stream: string; round: number }>();
      events.forEach((event, index) => {
        const aggregate = aggregateOf(event);
        if (failed.has(aggregate)) {
          outcomes[index] = { kind: 'failed', error: heldBack() };
          return;
        }
        let key: string;
        let fields: string[];
        try {
          key = streamOf(event);
          fields = toStreamFields(event);
        } catch (error) {
          outcomes[index] = { kind: 'failed', error };
          failed.add(aggregate);
          return;
        }
        const before = last.get(aggregate);
        const round = before === undefined ? 0 : before.stream === key ? before.round : before.round + 1;
        last.set(aggregate, { stream: key, round });
        const streams = (rounds[round] ??= new Map());
        const entries = streams.get(key);
        if (entries) entries.push({ index, aggregate, fields });
        else streams.set(key, [{ index, aggregate, fields }]);
      });
      for (const streams of rounds) {
        const sending = new Map<string, Entry[]>();
        for (const [key, entries] of streams) {
          const ready = entries.filter((entry) => {
            if (!failed.has(entry.aggregate)) return true;
            outcomes[entry.index] = { kind: 'failed', error: heldBack() };
            return false;
          });
          if (ready.length > 0) sending.set(key, ready);
        }
        // A Cluster cannot run keys of different slots in one call: one script call per stream.
        await Promise.all([...sending].map(([key, entries]) => appendTo(key, entries, outcomes, failed)));
      }
      return outcomes;
    },
  };
}
