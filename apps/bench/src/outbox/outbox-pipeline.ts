import type { InboxOutcome, OutboxEvent, Publisher } from '@oncely/core/adapter';
import { createRelay, type Relay } from '@oncely/core/outbox';
import { type PostgresTx, postgresInbox, postgresOutbox } from '@oncely/postgres';
import { partitionOf, type RedisStreamConsumer, redisStreamConsumer, redisStreamPublisher } from '@oncely/redis';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { latencyRecorder } from '../harness/latency-recorder.js';
import { preciseNow } from '../harness/precise-clock.js';
import { consumersOf } from './consumer-set.js';
import { startProducerChild } from './producer-child.js';
import { type ProducerJob, type ProducerStamp, produce } from './producer-process.js';
import type { PipelineStages } from './pipeline-stages.js';

/** Applies a read of several events in one inbox transaction (Redis Streams' `handleBatch`). */
export type BatchHandler = (events: readonly OutboxEvent[]) => Promise<{ readonly outcomes: readonly InboxOutcome[]; readonly failed?: { readonly index: number; readonly error: unknown } }>;

/** A broker between the relays and the consumers: its publisher, and consumers that apply through `handle`. */
export interface Transport {
  readonly publisher: Publisher;
  /** Starts the consumers; resolves a function that stops them. A transport without batches ignores `handleBatch`. */
  startConsumers(
    handle: (event: OutboxEvent) => Promise<InboxOutcome>,
    onFailure: (event: unknown) => void,
    handleBatch?: BatchHandler,
  ): Promise<() => Promise<void>>;
}

/** Redis Streams: `partitions` streams routed by aggregate, one consumer each. */
export function redisTransport(redis: Redis, runId: string, partitions: number): Transport {
  const streamOf = (partition: number) => `${runId}:${partition}`;
  return {
    publisher: redisStreamPublisher({ client: redis, stream: (event) => streamOf(partitionOf(event.aggregateId, partitions)) }),
    async startConsumers(handle, onFailure, handleBatch) {
      const consumers: RedisStreamConsumer[] = Array.from({ length: partitions }, (_, partition) =>
        redisStreamConsumer({
          client: redis,
          stream: streamOf(partition),
          group: `${runId}-billing`,
          consumer: `consumer-${partition}`,
          blockMs: 100,
          ...(handleBatch ? { handleBatch } : { handle }),
          onEvent: (event) => {
            if (event.type === 'consumer_error' || event.type === 'stream_handler_failed') onFailure(event);
          },
        }),
      );
      return consumersOf(consumers);
    },
  };
}

/** Options of one end-to-end run. */
export interface PipelineOptions {
  readonly pool: pg.Pool;
  readonly transport: Transport;
  readonly schema: string;
  readonly relays: number;
  readonly events: number;
  readonly aggregates: number;
  /** Concurrent producer transactions. */
  readonly producers: number;
  /** Unique per run: names the relays. */
  readonly runId: string;
  /** Offered load: event `n` is enqueued no earlier than `n / ratePerSec` s after the start (default: as fast as producers go). */
  readonly ratePerSec?: number;
  /** Consumers apply each read in one inbox transaction (`inbox.runBatch`) where the transport can. */
  readonly batchedInbox?: boolean;
  /** Longest a run may take before it is declared stuck. */
  readonly timeoutMs: number;
  /** Stamps each event at every stage (source, publisher and batch handler wrapped), for a breakdown. */
  readonly stages?: PipelineStages;
  /**
   * Producers run in a child process of their own (the application, as app servers are), so the
   * relay's and the consumers' event loop is not also the producers'; default: in this process.
   */
  readonly producerProcess?: boolean;
}

/** What one run measured and what the business table holds afterwards. */
export interface PipelineResult {
  readonly events: number;
  /** Events from the first enqueue to the last applied, per second. */
  readonly eventsPerSec: number;
  /** From enqueue (database clock) to the relay's mark, as the relay reports it. */
  readonly publishLag: { readonly p50: number; readonly p99: number };
  /** From enqueue (database clock) to the consumer's commit. */
  readonly applyLag: { readonly p50: number; readonly p99: number };
  /** Rows in the applied table: each event once, so it must equal `events`. */
  readonly appliedRows: number;
  readonly distinctApplied: number;
  /** Aggregates whose events were applied out of `aggregate_seq` order (must be 0). */
  readonly outOfOrderAggregates: number;
  /** Redeliveries the inbox recognised and skipped. */
  readonly duplicatesSkipped: number;
}

/**
 * Producers enqueue events in their own transactions; `relays` relays publish them through the
 * transport (Redis Streams, NATS JetStream, RabbitMQ); its consumers apply each through the
 * PostgreSQL inbox into an `applied` table. Ends when every event is applied, then reads the
 * business state back.
 */
export async function runPipeline(options: PipelineOptions): Promise<PipelineResult> {
  const { pool, transport, schema, runId } = options;
  const applied = `${schema}.applied`;
  const outbox = postgresOutbox({ db: pool, schema });
  const inbox = postgresInbox({ db: pool, schema });
  const publishLag = latencyRecorder();
  const applyLag = latencyRecorder();
  let appliedCount = 0;
  let duplicates = 0;
  let lastAppliedAt = 0;
  let allApplied: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    allApplied = resolve;
  });
  const failures: unknown[] = [];

  const applyEvent = (tx: PostgresTx, event: OutboxEvent) =>
    tx.query(`INSERT INTO ${applied} (event_id, aggregate_id, aggregate_seq) VALUES ($1, $2, $3)`, [
      event.eventId,
      event.aggregateId,
      event.aggregateSeq,
    ]);
  const counted = (event: OutboxEvent, outcome: InboxOutcome) => {
    if (outcome === 'duplicate') {
      duplicates++;
      return;
    }
    lastAppliedAt = preciseNow();
    applyLag.record(lastAppliedAt - event.createdAt.getTime());
    if (++appliedCount === options.events) allApplied();
  };
  const handle = async (event: OutboxEvent): Promise<InboxOutcome> => {
    const outcome = await inbox.run({ consumer: 'bench-billing', eventId: event.eventId }, (tx) => applyEvent(tx, event));
    counted(event, outcome);
    return outcome;
  };
  const applyBatch: BatchHandler = async (events) => {
    const result = await inbox.runBatch(
      'bench-billing',
      events.map((event) => ({ eventId: event.eventId, fn: (tx: PostgresTx) => applyEvent(tx, event) })),
    );
    for (const [index, outcome] of result.outcomes.entries()) counted(events[index]!, outcome);
    return result;
  };
  const { stages } = options;
  const handleBatch = stages ? stages.batch(applyBatch) : applyBatch;
  const publisher = stages ? stages.publisher(transport.publisher) : transport.publisher;
  const source = stages ? stages.source(outbox.source) : outbox.source;
  const relays: Relay[] = Array.from({ length: options.relays }, (_, i) =>
    createRelay({
      source,
      publisher,
      id: `${runId}-relay-${i}`,
      purge: false,
      statsIntervalMs: 0,
      onEvent: (event) => {
        if (event.type === 'outbox_published') publishLag.record(event.lagMs);
        if (event.type === 'relay_error' || event.type === 'outbox_dead_lettered') failures.push(event);
      },
    }),
  );

  const producerChild = options.producerProcess ? await startProducerChild() : undefined;
  const stopConsumers = await transport.startConsumers(handle, (failure) => failures.push(failure), options.batchedInbox ? handleBatch : undefined);
  for (const relay of relays) relay.start();
  const started = preciseNow();
  try {
    const job: ProducerJob = {
      databaseUrl: pool.options.connectionString ?? '',
      schema,
      events: options.events,
      aggregates: options.aggregates,
      producers: options.producers,
      startedAt: started,
      ...(options.ratePerSec === undefined ? {} : { ratePerSec: options.ratePerSec }),
    };
    const stamped = (stamp: ProducerStamp) => stages?.produced(stamp);
    await (producerChild ? producerChild.run(job, stamped) : produce(job, pool, stamped));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`bench: ${appliedCount} of ${options.events} events applied after ${options.timeoutMs} ms; ${failures.length} failures`)),
        options.timeoutMs,
      );
    });
    await Promise.race([done, timeout]).finally(() => clearTimeout(timer));
  } finally {
    producerChild?.kill();
    await Promise.all(relays.map((relay) => relay.stop()));
    await stopConsumers();
  }
  const { rows } = await pool.query<{ total: number; distinct: number }>(
    `SELECT count(*)::int AS total, count(DISTINCT event_id)::int AS distinct FROM ${applied}`,
  );
  const order = await pool.query<{ n: number }>(
    `SELECT count(DISTINCT aggregate_id)::int AS n FROM (
       SELECT aggregate_id, aggregate_seq < lag(aggregate_seq) OVER (PARTITION BY aggregate_id ORDER BY id) AS backwards
       FROM ${applied}) AS steps
     WHERE backwards`,
  );
  const publish = publishLag.summary();
  const apply = applyLag.summary();
  return {
    events: options.events,
    eventsPerSec: (options.events * 1_000) / (lastAppliedAt - started),
    publishLag: { p50: publish.p50, p99: publish.p99 },
    applyLag: { p50: apply.p50, p99: apply.p99 },
    appliedRows: rows[0]!.total,
    distinctApplied: rows[0]!.distinct,
    outOfOrderAggregates: order.rows[0]!.n,
    duplicatesSkipped: duplicates,
  };
}
