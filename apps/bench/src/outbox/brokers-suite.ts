import { connect as connectNats } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { BenchOptions } from '../cli/options.js';
import { alternate, type Contender, medianRatio } from '../harness/alternating.js';
import { formatMs, formatRate, formatRatio, markdownTable } from '../harness/markdown.js';
import type { Report } from '../harness/report.js';
import { median } from '../harness/stats.js';
import { ensureBenchDatabase } from '../postgres/bench-database.js';
import type { PrivateRedis } from '../servers/private-redis.js';
import { natsTransport, rabbitTransport } from './broker-transports.js';
import { type PipelineResult, redisTransport, runPipeline, type Transport } from './outbox-pipeline.js';
import { emptyTables, resetTables } from './outbox-suite.js';

const SCHEMA = 'bench_brokers';
const RELAYS = 3;
const AGGREGATES = 200;
const BUCKETS = 4;
const PRODUCERS = 8;
const BROKERS = ['Redis Streams', 'NATS JetStream', 'RabbitMQ'] as const;

/**
 * The same outbox pipeline over each broker: the same producers, relays, PostgreSQL outbox and
 * inbox, only the publisher and consumers differ; alternating runs, Redis Streams as the baseline.
 */
export async function runBrokersSuite(redis: PrivateRedis, options: BenchOptions, report: Report): Promise<void> {
  const pool = new pg.Pool({ connectionString: await ensureBenchDatabase(options.databaseUrl), max: 20 });
  const client = new Redis(redis.url);
  const nc = await connectNats({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
  const amqpConnection = await amqp.connect(process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672');
  const results = new Map<string, PipelineResult[]>(BROKERS.map((name) => [name, []]));
  try {
    await resetTables(pool, SCHEMA);
    let run = 0;
    const transportOf = async (broker: (typeof BROKERS)[number], runId: string): Promise<Transport & { remove?(): Promise<void> }> => {
      if (broker === 'NATS JetStream') return natsTransport(nc, runId, BUCKETS);
      if (broker === 'RabbitMQ') return rabbitTransport(amqpConnection, runId, BUCKETS);
      return redisTransport(client, runId, BUCKETS);
    };
    const contenders: Contender[] = BROKERS.map((broker) => ({
      name: broker,
      async run() {
        await emptyTables(pool, SCHEMA);
        const runId = `brokers${Date.now().toString(36)}r${run++}`;
        const transport = await transportOf(broker, runId);
        try {
          const result = await runPipeline({
            pool,
            transport,
            schema: SCHEMA,
            relays: RELAYS,
            events: options.outboxEvents,
            aggregates: AGGREGATES,
            producers: PRODUCERS,
            runId,
            timeoutMs: 300_000,
          });
          results.get(broker)!.push(result);
          return {
            ops: result.events,
            elapsedMs: (result.events * 1_000) / result.eventsPerSec,
            opsPerSec: result.eventsPerSec,
            latency: { ...result.applyLag, count: result.events },
          };
        } finally {
          await transport.remove?.();
        }
      },
    }));
    const alternating = await alternate(contenders, options.rounds);
    const rows = BROKERS.map((broker, i) => {
      const list = results.get(broker)!;
      const contender = alternating.byName.get(broker)!;
      const correct = list.every((r) => r.appliedRows === r.events && r.distinctApplied === r.events && r.outOfOrderAggregates === 0);
      return [
        broker,
        formatRate(contender.medianOpsPerSec),
        `${formatMs(contender.medianP50)} / ${formatMs(contender.medianP99)}`,
        `${formatMs(median(list.map((r) => r.publishLag.p50)))} / ${formatMs(median(list.map((r) => r.publishLag.p99)))}`,
        i === 0 ? 'baseline' : formatRatio(medianRatio(alternating, broker, BROKERS[0])),
        correct ? `yes, all ${list.length} runs` : 'NO: see the run log',
      ];
    });
    report.section(
      'Outbox over each broker: enqueue → relay → broker → inbox → applied',
      [
        markdownTable(
          ['broker', 'events/s end to end (median)', 'enqueue→applied p50 / p99 ms', 'publish lag p50 / p99 ms', '÷ Redis Streams', 'each event applied once, in aggregate order'],
          rows,
        ),
        '',
        `Each run: ${options.outboxEvents.toLocaleString('en-US')} events over ${AGGREGATES} aggregates, enqueued by ${PRODUCERS} concurrent producers`,
        `(one event per transaction), ${RELAYS} relays, ${BUCKETS} partitions routed by aggregate with one sequential consumer each`,
        '(Redis: a stream and `redisStreamConsumer`; NATS: a bucket subject and a durable pull consumer with `maxAckPending` 1,',
        'acknowledged with `ackAck`; RabbitMQ: a quorum queue with a single active consumer, prefetch 20), applying through',
        '`postgresInbox.run` into an `applied` table. Redis is the bench\'s private server; NATS and RabbitMQ are the shared',
        'servers (JetStream file storage; quorum queues with publisher confirms). Median of per-run percentiles.',
      ].join('\n'),
    );
  } finally {
    client.disconnect();
    await nc.close();
    await amqpConnection.close().catch(() => undefined);
    await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => undefined);
    await pool.end();
  }
}
