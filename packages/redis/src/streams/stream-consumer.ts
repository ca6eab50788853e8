import { OncelyError } from '@oncely/core';
import {
  assertIdentifier,
  backgroundLoop,
  type BrokerConsumerOptions,
  eventEmitter,
  type InboxOutcome,
  integerOption,
  invalidOption,
  type LoopStatus,
  type OutboxEvent,
  resolveBrokerConsumerOptions,
  storageGuard,
  toStorageError,
  withConsumerSpan,
} from '@oncely/core/adapter';
import { fullJitter } from '@oncely/core/retry';
import type { Cluster, Redis } from 'ioredis';
import { duplicateWithLegacyReplies } from '../ioredis/duplicate.js';
import type { ConsumerStage, StreamConsumerEvent } from './consumer-events.js';
import { parseStreamEntry } from './stream-entry.js';
import { traceApi } from './trace-api.js';

/** Where an event came from, for handlers that log or trace. */
export interface StreamDelivery {
  readonly stream: string;
  readonly entryId: string;
  readonly group: string;
  readonly consumer: string;
}

/**
 * Applies one event and says whether it was new. Run your inbox in it:
 * `(event) => db.transaction((tx) => inbox.process(tx, { consumer: 'billing', eventId: event.eventId }, apply))`.
 * Throwing leaves the entry pending: it is retried, before any later entry of its stream.
 */
export type StreamHandler = (event: OutboxEvent, delivery: StreamDelivery) => Promise<InboxOutcome>;

/** What a {@link StreamBatchHandler} applied: outcomes of its first events, in order, and the one that failed, if any. */
export interface StreamBatchResult {
  readonly outcomes: readonly InboxOutcome[];
  readonly failed?: { readonly index: number; readonly error: unknown };
}

/**
 * Applies a stream's share of a read in one go, in stream order, e.g. in one inbox transaction:
 * `(events) => inbox.runBatch('billing', events.map((event) => ({ eventId: event.eventId, fn: (tx) => apply(tx, event) })))`.
 * The first `outcomes.length` entries are acknowledged; a failed one (and the rest) stays pending
 * and is retried, before any later entry of its stream.
 */
export type StreamBatchHandler = (
  events: readonly OutboxEvent[],
  delivery: Omit<StreamDelivery, 'entryId'>,
) => Promise<StreamBatchResult>;

/** Options of {@link redisStreamConsumer}. */
export interface RedisStreamConsumerOptions extends BrokerConsumerOptions<StreamConsumerEvent> {
  /** An ioredis `Redis` or `Cluster`; the consumer reads on its own duplicate connection (blocking reads) and closes only that. */
  readonly client: Redis | Cluster;
  /** The stream or streams to read. Give each stream one live consumer if its aggregates need their order kept. */
  readonly stream: string | readonly string[];
  /** The consumer group, usually the consuming service (`billing`); created if missing. */
  readonly group: string;
  /** This reader's name in the group. Reuse it after a restart to finish its own pending entries first. */
  readonly consumer: string;
  /** Applies one event at a time; give this or `handleBatch`. */
  readonly handle?: StreamHandler;
  /** Applies each stream's entries of a read together (one transaction instead of one per event); give this or `handle`. */
  readonly handleBatch?: StreamBatchHandler;
  /** Most entries read per call (default 50). */
  readonly batchSize?: number;
  /** How long one read blocks waiting for new entries (default 1 000 ms). */
  readonly blockMs?: number;
  /** Entries pending this long with another consumer are taken over with XAUTOCLAIM (default 30 000 ms). */
  readonly claimIdleMs?: number;
  /** How often XAUTOCLAIM looks for such entries (default 5 000 ms). */
  readonly claimIntervalMs?: number;
  /** Where a newly created group starts: `0` reads the stream's history (default), `$` only new entries. */
  readonly startId?: '0' | '$';
}

/** A consumer-group reader; see {@link redisStreamConsumer}. */
export interface RedisStreamConsumer {
  readonly group: string;
  readonly consumer: string;
  readonly status: LoopStatus;
  /** Opens the connection and creates the group(s), then reads in the background. Rejects if that setup fails. */
  start(): Promise<void>;
  /** Lets the handler in flight finish and acknowledges it, interrupts a blocked read, closes the connection. */
  stop(): Promise<void>;
}

/** One entry as a read returned it. */
interface RawEntry {
  readonly stream: string;
  readonly id: string;
  readonly fields: readonly string[] | null;
}

type StreamReply = [stream: string, entries: [id: string, fields: string[] | null][]][] | null;
/** How handling one stream's share of a batch ended. */
type StreamResult =
  | { readonly kind: 'handled'; readonly ack: readonly string[] }
  | { readonly kind: 'failed'; readonly ack: readonly string[]; readonly retryInMs: number };

const MAX_EXPONENT = 30;
const positive = (name: string, value: number) => integerOption(`oncely/redis: ${name}`, value);

/** ioredis emits `'error'` on every lost connection; unheard, it is logged as an unhandled error event. */
const ignoreConnectionError = () => undefined;

/** `pending`'s value, or undefined as soon as `signal` aborts (a later failure of `pending` is then dropped). */
function untilStopped<T>(pending: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Reads events from Redis streams as one consumer of a consumer group and acknowledges each entry
 * only after `handle` resolved, so an entry whose consumer died is never lost: the same consumer
 * re-reads its own pending entries first when it restarts, and any consumer of the group takes over
 * entries left pending longer than `claimIdleMs` with `XAUTOCLAIM`. Delivery is therefore
 * at-least-once; `handle` runs the inbox, which turns a redelivery into `duplicate` (acknowledged,
 * not applied again), for an effectively-once effect on the state the inbox's transaction covers.
 *
 * Entries of one stream are handled one at a time in stream order, and a failing entry holds back
 * the later entries of its stream until it succeeds, so an aggregate's events (routed to one
 * stream by the publisher) are applied in `aggregateSeq` order, as long as one consumer reads that
 * stream at a time.
 */
export function redisStreamConsumer(options: RedisStreamConsumerOptions): RedisStreamConsumer {
  const { client, group, consumer } = options;
  const { backoff, clock, random } = resolveBrokerConsumerOptions(options);
  if (!client || typeof client.duplicate !== 'function') throw invalidOption('oncely/redis', 'redisStreamConsumer needs an ioredis Redis or Cluster client');
  if ((typeof options.handle === 'function') === (typeof options.handleBatch === 'function')) {
    throw invalidOption('oncely/redis', 'redisStreamConsumer needs a handle or a handleBatch function (one of them)');
  }
  const streams = typeof options.stream === 'string' ? [options.stream] : [...options.stream];
  if (streams.length === 0 || new Set(streams).size !== streams.length) {
    throw invalidOption('oncely/redis', 'stream must name at least one stream, each once');
  }
  for (const stream of streams) assertIdentifier('invalid_option', 'stream', stream);
  assertIdentifier('invalid_option', 'group', group);
  assertIdentifier('invalid_option', 'consumer', consumer);
  const batchSize = positive('batchSize', options.batchSize ?? 50);
  const blockMs = positive('blockMs', options.blockMs ?? 1_000);
  const claimIdleMs = positive('claimIdleMs', options.claimIdleMs ?? 30_000);
  const claimIntervalMs = positive('claimIntervalMs', options.claimIntervalMs ?? 5_000);
  const startId = options.startId ?? '0';

  let connection: Redis | Cluster | undefined;
  let trace: Awaited<ReturnType<typeof traceApi>>;
  let blocked = false;
  // Connections lost so far: ioredis resends a read that was in flight, and entries the server had
  // handed to the lost connection are then pending to us but skipped by the resent read.
  let lost = 0;
  const attempts = new Map<string, number>();
  // The Redis command in progress, so a failure can say where it happened.
  let stage: ConsumerStage = 'read';
  const emit = eventEmitter<StreamConsumerEvent, 'group' | 'consumer'>(options.onEvent, clock, { group, consumer });
  const storageCall = storageGuard('redis');
  const redis = <T>(at: ConsumerStage, call: () => Promise<T>): Promise<T> => {
    stage = at;
    return storageCall(`consumer.${at}`, call);
  };

  const flatten = (reply: StreamReply): RawEntry[] =>
    (reply ?? []).flatMap(([stream, entries]) => entries.map(([id, fields]) => ({ stream, id, fields })));

  /** Entries delivered to this consumer name earlier and never acknowledged: a restart resumes here. */
  async function readOwnPending(conn: Redis | Cluster): Promise<RawEntry[]> {
    const reply = await redis('read', () =>
      conn.xreadgroup('GROUP', group, consumer, 'COUNT', batchSize, 'STREAMS', ...streams, ...streams.map(() => '0')),
    );
    return flatten(reply as StreamReply);
  }

  async function readNew(conn: Redis | Cluster): Promise<RawEntry[]> {
    blocked = true;
    try {
      const read = redis('read', () =>
        conn.xreadgroup('GROUP', group, consumer, 'COUNT', batchSize, 'BLOCK', blockMs, 'STREAMS', ...streams, ...streams.map(() => '>')),
      );
      // stop() does not wait on the read: closed while ioredis waits to reconnect, the connection
      // never settles a queued command. What the read was handed stays pending to this consumer name.
      const reply = await untilStopped(read, loop.stopSignal);
      return flatten(reply as StreamReply);
    } finally {
      blocked = false;
    }
  }

  /** One XAUTOCLAIM page per stream; `done` once every stream's scan wrapped around. */
  async function reclaim(conn: Redis | Cluster, cursors: Map<string, string>): Promise<{ entries: RawEntry[]; done: boolean }> {
    const entries: RawEntry[] = [];
    for (const stream of streams) {
      const reply = (await redis('claim', () =>
        conn.xautoclaim(stream, group, consumer, claimIdleMs, cursors.get(stream) ?? '0-0', 'COUNT', batchSize),
      )) as [string, [string, string[] | null][]];
      const [next, claimed] = reply;
      cursors.set(stream, next);
      if (claimed.length > 0) emit({ type: 'stream_reclaimed', stream, count: claimed.length });
      for (const [id, fields] of claimed) entries.push({ stream, id, fields });
    }
    return { entries, done: [...cursors.values()].every((cursor) => cursor === '0-0') };
  }

  /** Reports one entry's failure and says when to try again. */
  function failure(stream: string, entryId: string, event: OutboxEvent, error: unknown): number {
    // Entry ids are unique per stream only: two streams can hold the same id.
    const key = `${stream}\u0000${entryId}`;
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    const retryInMs = fullJitter(Math.min(attempt - 1, MAX_EXPONENT), backoff, random);
    emit({ type: 'stream_handler_failed', stream, entryId, eventId: event.eventId, attempt, retryInMs, error });
    return retryInMs;
  }

  function handled(stream: string, entryId: string, event: OutboxEvent, outcome: unknown): void {
    if (outcome !== 'processed' && outcome !== 'duplicate') {
      throw new OncelyError('invalid_state', `oncely/redis: the handler must resolve 'processed' or 'duplicate', got ${String(outcome)}`);
    }
    attempts.delete(`${stream}\u0000${entryId}`);
    const type = outcome === 'processed' ? 'stream_processed' : 'stream_duplicate';
    emit({ type, stream, entryId, eventId: event.eventId, eventType: event.eventType });
  }

  /** Handles a stream's entries in order and stops at the first failure: later entries must wait for it. */
  async function handleStream(stream: string, entries: readonly RawEntry[]): Promise<StreamResult> {
    const ack: string[] = [];
    const events: { entryId: string; event: OutboxEvent }[] = [];
    for (const entry of entries) {
      const parsed = parseStreamEntry(entry.fields);
      if (parsed.kind === 'malformed') {
        emit({ type: 'stream_malformed', stream, entryId: entry.id, problem: parsed.problem, fields: parsed.fields });
        ack.push(entry.id);
      } else events.push({ entryId: entry.id, event: parsed.event });
    }
    if (options.handleBatch) return handleTogether(stream, events, ack, options.handleBatch);
    const handle = options.handle!;
    for (const { entryId, event } of events) {
      try {
        const span = { name: `${group} process`, headers: event.headers, attributes: { 'messaging.system': 'redis', 'messaging.destination.name': stream } };
        handled(stream, entryId, event, await withConsumerSpan(trace, span, () => handle(event, { stream, entryId, group, consumer })));
        ack.push(entryId);
      } catch (error) {
        return { kind: 'failed', ack, retryInMs: failure(stream, entryId, event, error) };
      }
    }
    return { kind: 'handled', ack };
  }

  /** One call for the stream's events: acknowledges the prefix it applied; the failed entry waits. */
  async function handleTogether(
    stream: string,
    events: readonly { entryId: string; event: OutboxEvent }[],
    ack: string[],
    handleBatch: StreamBatchHandler,
  ): Promise<StreamResult> {
    if (events.length === 0) return { kind: 'handled', ack };
    let result: StreamBatchResult;
    try {
      result = await handleBatch(
        events.map((e) => e.event),
        { stream, group, consumer },
      );
      const applied = result?.failed ? result.failed.index : events.length;
      if (!Array.isArray(result?.outcomes) || result.outcomes.length !== applied || applied > events.length) {
        throw new OncelyError('invalid_state', `oncely/redis: handleBatch must answer one outcome per applied event (${events.length} given)`);
      }
      result.outcomes.forEach((outcome, index) => {
        handled(stream, events[index]!.entryId, events[index]!.event, outcome);
        ack.push(events[index]!.entryId);
      });
    } catch (error) {
      // An answer outside the contract (or a throw): nothing is acknowledged, the inbox dedupes the retry.
      return { kind: 'failed', ack, retryInMs: failure(stream, events[0]!.entryId, events[0]!.event, error) };
    }
    if (!result.failed) return { kind: 'handled', ack };
    const { entryId, event } = events[result.failed.index]!;
    return { kind: 'failed', ack, retryInMs: failure(stream, entryId, event, result.failed.error) };
  }

  /** Handles a batch stream by stream and acknowledges what went through; resolves the pause a failure asks for, or 0. */
  async function handleBatch(conn: Redis | Cluster, entries: readonly RawEntry[]): Promise<number> {
    let pauseMs = 0;
    for (const stream of streams) {
      const own = entries.filter((entry) => entry.stream === stream);
      if (own.length === 0) continue;
      const result = await handleStream(stream, own);
      if (result.ack.length > 0) await redis('ack', () => conn.xack(stream, group, ...result.ack));
      if (result.kind === 'failed') pauseMs = Math.max(pauseMs, result.retryInMs, 1);
    }
    return pauseMs;
  }

  async function createGroup(conn: Redis | Cluster, stream: string): Promise<void> {
    try {
      await conn.xgroup('CREATE', stream, group, startId, 'MKSTREAM');
    } catch (error) {
      // BUSYGROUP: the group exists already, the normal case after the first start.
      if (error instanceof Error && error.message.startsWith('BUSYGROUP')) return;
      throw toStorageError('redis', 'consumer.group', error);
    }
  }

  // Where the rounds are: own pending entries first (a restart resumes there), then takeovers and new entries.
  let ownPending = true;
  let claimAt = 0;
  const cursors = new Map<string, string>();

  async function round(): Promise<void> {
    const conn = connection!;
    const lostBefore = lost;
    let entries: RawEntry[];
    if (ownPending) {
      entries = await readOwnPending(conn);
      if (entries.length === 0) ownPending = false;
    } else if (clock.now() >= claimAt) {
      const page = await reclaim(conn, cursors);
      entries = page.entries;
      if (page.done) claimAt = clock.now() + claimIntervalMs;
    } else {
      entries = await readNew(conn);
    }
    if (lost !== lostBefore) {
      // The read may have been resent past entries delivered to the lost connection: re-read our pending ones, in order.
      ownPending = true;
      return;
    }
    if (entries.length === 0) return;
    const pauseMs = await handleBatch(conn, entries);
    if (pauseMs > 0) {
      // The failed entry and those after it are still pending to us: re-read them, in order.
      ownPending = true;
      await loop.pause(pauseMs);
    }
  }

  const loop = backgroundLoop({
    label: `oncely/redis: consumer ${consumer}`,
    kind: 'consumer',
    clock,
    random,
    backoff,
    async beforeRounds() {
      claimAt = clock.now();
    },
    round,
    onFailure(error, retryInMs) {
      emit({ type: 'consumer_error', stage, error, retryInMs });
      ownPending = true;
    },
    onStop() {
      // A blocked XREADGROUP cannot be cancelled; closing the connection ends it. Entries it had
      // been handed stay pending to this consumer name and are read again, never lost.
      if (blocked) connection?.disconnect();
    },
    async afterRounds() {
      // QUIT only on a ready connection: one that is reconnecting would queue it, and may never send it.
      if (connection?.status === 'ready') await connection.quit().catch(() => connection?.disconnect());
      else connection?.disconnect();
      emit({ type: 'consumer_stopped' });
    },
  });

  return {
    group,
    consumer,
    get status() {
      return loop.status;
    },
    async start() {
      return loop.start(async () => {
        trace = await traceApi(options.trace);
        const conn = duplicateWithLegacyReplies(client);
        // The consumer's own connection, heard for its whole life: ioredis reconnects by itself, and the
        // command that failed meanwhile reports the outage through the loop (consumer_error).
        conn.on('error', ignoreConnectionError);
        conn.on('close', () => {
          lost++;
        });
        connection = conn;
        try {
          for (const stream of streams) await createGroup(conn, stream);
        } catch (error) {
          conn.disconnect();
          throw error;
        }
        emit({ type: 'consumer_started' });
      });
    },
    stop: () => loop.stop(),
  };
}
