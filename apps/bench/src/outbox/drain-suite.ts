import { performance } from 'node:perf_hooks';
import { migrate } from '@oncely/postgres';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { BenchOptions } from '../cli/options.js';
import { alternate, type Contender, medianRatio } from '../harness/alternating.js';
import { formatMs, formatRate, formatRatio, markdownTable } from '../harness/markdown.js';
import type { Report } from '../harness/report.js';
import { median } from '../harness/stats.js';
import { ensureBenchDatabase } from '../postgres/bench-database.js';
import type { PrivateRedis } from '../servers/private-redis.js';
import { bareDrain, claimTime, fillBacklog, relayDrain } from './drain-backlog.js';
import { redisTransport, runPipeline } from './outbox-pipeline.js';
import { pipelineStages } from './pipeline-stages.js';

const SCHEMA = 'bench_drain';
const SHAPES = [1_000, 10, 1] as const;
const CLAIM_BACKLOGS = [1_000, 100_000] as const;
// 5 claims of 100 fit in the smaller backlog even when each aggregate holds one event.
const CLAIMS_TIMED = 5;
const OFFERED_PER_SEC = 1_000;

async function resetTables(pool: pg.Pool): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await migrate(pool, { schema: SCHEMA });
  await pool.query(`CREATE TABLE ${SCHEMA}.applied (
    id bigserial PRIMARY KEY, event_id text NOT NULL, aggregate_id text NOT NULL, aggregate_seq bigint NOT NULL)`);
}

const aggregatesLabel = (n: number) => `${n.toLocaleString('en-US')} aggregate${n > 1 ? 's' : ''}`;

/**
 * Draining a pre-filled backlog: oncely relays (1 and 3, publisher acknowledging at once) against a
 * bare SKIP LOCKED drain of the same rows, per backlog shape; the claim's time at two backlog sizes;
 * and enqueue→applied latency at a steady offered load.
 */
export async function runOutboxDrainSuite(redis: PrivateRedis, options: BenchOptions, report: Report): Promise<void> {
  const pool = new pg.Pool({ connectionString: await ensureBenchDatabase(options.databaseUrl), max: 20 });
  const client = new Redis(redis.url);
  const { drainEvents: events, drainCapMs: capMs } = options;
  try {
    await resetTables(pool);
    const rows: (string | number)[][] = [];
    for (const aggregates of SHAPES) {
      const shape = { events, aggregates };
      const contender = (name: string, drain: () => Promise<import('../harness/closed-loop.js').RunMeasurement>): Contender => ({
        name,
        async run() {
          await fillBacklog(pool, SCHEMA, shape);
          return drain();
        },
      });
      const contenders = [
        contender('bare', () => bareDrain(pool, SCHEMA, events, 1, capMs)),
        contender('1 relay', () => relayDrain(pool, SCHEMA, events, 1, capMs)),
        contender('3 relays', () => relayDrain(pool, SCHEMA, events, 3, capMs)),
      ];
      const result = await alternate(contenders, options.drainRounds);
      const rate = (name: string) => result.byName.get(name)!.medianOpsPerSec;
      const drained = (name: string) => median(result.byName.get(name)!.runs.map((r) => r.ops));
      rows.push([
        aggregatesLabel(aggregates),
        formatRate(rate('bare')),
        `${formatRate(rate('1 relay'))} (${formatRate(drained('1 relay'))} drained)`,
        `${formatRate(rate('3 relays'))} (${formatRate(drained('3 relays'))} drained)`,
        formatRatio(medianRatio(result, '1 relay', 'bare')),
        formatRatio(medianRatio(result, '3 relays', '1 relay')),
      ]);
    }
    report.section(
      'Outbox drain: a pre-filled backlog, oncely relays against a bare SKIP LOCKED drain',
      [
        markdownTable(
          ['backlog shape', 'bare SKIP LOCKED events/s', '1 relay events/s', '3 relays events/s', '1 relay ÷ bare', '3 relays ÷ 1 relay'],
          rows,
        ),
        '',
        `Each run drains a backlog of ${events.toLocaleString('en-US')} events written straight into the outbox tables (as enqueue leaves`,
        `them), ${options.drainRounds} alternating round(s) after a warm-up, medians; a run stops after ${capMs / 1_000} s and its rate counts what it`,
        'drained by then. The publisher acknowledges at once. Bare: one loop of `FOR UPDATE SKIP LOCKED` batches of 100 in',
        'position order, leased then marked (the two statements per batch a relay sends, committed as the relay commits them:',
        '`synchronous_commit` off for their own transaction), with no per-aggregate order.',
      ].join('\n'),
    );
    const claims: (string | number)[][] = [];
    for (const aggregates of [1_000, 1]) {
      const times = [];
      for (const backlog of CLAIM_BACKLOGS) {
        await fillBacklog(pool, SCHEMA, { events: backlog, aggregates });
        times.push(await claimTime(pool, SCHEMA, CLAIMS_TIMED));
      }
      claims.push([aggregatesLabel(aggregates), formatMs(times[0]!), formatMs(times[1]!), formatRatio(times[1]! / times[0]!)]);
    }
    await pool.query(`TRUNCATE ${SCHEMA}.oncely_outbox, ${SCHEMA}.oncely_outbox_sequences, ${SCHEMA}.oncely_outbox_aggregates, ${SCHEMA}.oncely_inbox`);
    const e2eEvents = Math.round((OFFERED_PER_SEC * options.drainE2eMs) / 1_000);
    const runId = `drain${Date.now().toString(36)}`;
    const stages = pipelineStages();
    const busyBefore = performance.eventLoopUtilization();
    const e2e = await runPipeline({
      pool,
      transport: redisTransport(client, runId, 4),
      schema: SCHEMA,
      relays: 1,
      events: e2eEvents,
      aggregates: 1_000,
      producers: 8,
      runId,
      timeoutMs: 120_000,
      ratePerSec: OFFERED_PER_SEC,
      batchedInbox: true,
      stages,
      producerProcess: true,
    });
    const busy = performance.eventLoopUtilization(busyBefore).utilization;
    const breakdown = stages.summary();
    await client.flushall();
    const correct = e2e.appliedRows === e2e.events && e2e.distinctApplied === e2e.events && e2e.outOfOrderAggregates === 0;
    report.section(
      'Outbox drain: claim time and end-to-end latency at a steady load',
      [
        markdownTable(['backlog shape', `claim of 100 at backlog ${CLAIM_BACKLOGS[0].toLocaleString('en-US')} (median ms)`, `at ${CLAIM_BACKLOGS[1].toLocaleString('en-US')}`, 'ratio'], claims),
        '',
        `Median of ${CLAIMS_TIMED} consecutive \`source.claim({ limit: 100 })\` calls, each batch marked published (untimed).`,
        '',
        markdownTable(
          ['offered load', 'events', 'enqueue→applied p50 / p99 ms', 'publish lag p50 / p99 ms', 'each event applied once, in order'],
          [
            [
              `${OFFERED_PER_SEC.toLocaleString('en-US')} events/s`,
              e2e.events,
              `${formatMs(e2e.applyLag.p50)} / ${formatMs(e2e.applyLag.p99)}`,
              `${formatMs(e2e.publishLag.p50)} / ${formatMs(e2e.publishLag.p99)}`,
              correct ? 'yes' : 'NO',
            ],
          ],
        ),
        '',
        `8 producers enqueue one event per transaction, paced to ${OFFERED_PER_SEC} events/s over 1,000 aggregates, in a child process of their own`,
        '(the application, as app servers are: before, their 3,000 statements a second shared the relay\'s event loop and queued every stage behind them);',
        '1 relay (LISTEN/NOTIFY) publishes to 4 Redis streams; one `redisStreamConsumer` per stream applies each read in one `postgresInbox.runBatch`',
        `transaction. The relay's and consumers' event loop was ${Math.round(busy * 100)} % busy.`,
        '',
        markdownTable(
          ['stage of the steady-load run', 'p50 ms', 'p99 ms'],
          breakdown.stages.map((stage) => [stage.name, formatMs(stage.p50), formatMs(stage.p99)]),
        ),
        '',
        `Each event stamped as it passes (app clock, to the µs; the enqueue statement by the database clock, which the outbox rounds down to the ms, so the first and last rows read up to 1 ms high). The relay ran ${breakdown.claims} claims`,
        `(${breakdown.emptyClaims} empty, ${breakdown.eventsPerClaim.toFixed(1)} events each on average) and ${breakdown.idleWaits} idle waits (median ${formatMs(breakdown.idleWaitP50)} ms).`,
      ].join('\n'),
    );
  } finally {
    client.disconnect();
    await pool.end();
  }
}
