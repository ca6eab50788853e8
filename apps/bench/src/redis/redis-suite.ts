import { createIdempotency } from '@oncely/core';
import { redisStore } from '@oncely/redis';
import { Redis } from 'ioredis';
import type { BenchOptions } from '../cli/options.js';
import { type AlternatingResult, alternate, medianRatio } from '../harness/alternating.js';
import { formatRatio, markdownTable } from '../harness/markdown.js';
import { type RaceResult, runRace } from '../harness/race.js';
import { raceTable } from '../harness/race-table.js';
import type { Report } from '../harness/report.js';
import { throughputTable } from '../harness/throughput-table.js';
import { firstRequestContender, replayContender, seedKeys } from '../harness/workload-runs.js';
import { expressIdempotencySubject } from '../peers/express-idempotency.js';
import { nodeIdempotencySubject } from '../peers/node-idempotency.js';
import { powertoolsSubject } from '../peers/powertools.js';
import type { PrivateRedis } from '../servers/private-redis.js';
import { oncelyLeaseSubject } from '../subjects/oncely-subject.js';
import { type Operations, subjectOperations } from '../subjects/operations.js';
import { paymentEffect } from '../subjects/payment-effect.js';
import type { IdempotentSubject } from '../subjects/subject.js';
import { type CommandsPerOperation, countCommands } from './count-per-operation.js';
import { rawIoredisOperations } from './raw-ioredis.js';

/** One contender of the Redis comparison. */
interface Entry {
  readonly ops: Operations;
  /** Present for real idempotency layers (they run the race); absent for the raw baselines. */
  readonly subject?: IdempotentSubject;
  /** Client-side pipelining only changes anything with concurrent callers: timed at concurrency > 1 only. */
  readonly pipelined: boolean;
  /** The baseline this contender's throughput is divided by. */
  readonly baseline: string;
  /** True for the oncely contenders, whose ratios are the headline. */
  readonly oncely: boolean;
}

const RAW = 'raw ioredis (same round trips)';
const RAW_PIPELINED = 'raw ioredis + enableAutoPipelining';
const ONCELY = 'oncely (@oncely/redis)';
const CONCURRENCIES = [1, 32] as const;

/**
 * oncely on Redis against raw ioredis doing the same round trips and against the peers that
 * install from npm, on one private Redis, in one run: round trips, throughput, races.
 */
export async function runRedisSuite(redis: PrivateRedis, options: BenchOptions, report: Report): Promise<void> {
  const prefix = `bench${Date.now().toString(36)}`;
  const effect = paymentEffect(false);
  const clients: Redis[] = [];
  const client = (pipelined: boolean) => {
    const created = new Redis(redis.url, { enableAutoPipelining: pipelined });
    clients.push(created);
    return created;
  };
  const entries: Entry[] = [
    { ops: rawIoredisOperations(client(false), prefix, effect, RAW), pipelined: false, baseline: RAW, oncely: false },
    {
      ops: rawIoredisOperations(client(true), prefix, effect, RAW_PIPELINED),
      pipelined: true,
      baseline: RAW_PIPELINED,
      oncely: false,
    },
  ];
  const addSubject = (subject: IdempotentSubject, pipelined: boolean, oncely: boolean) =>
    entries.push({
      ops: subjectOperations(subject, effect),
      subject,
      pipelined,
      baseline: pipelined ? RAW_PIPELINED : RAW,
      oncely,
    });
  const admin = client(false);
  // Only ever the bench's own private server: it holds nothing but this run's keys.
  const flush = () => admin.flushall();

  try {
    const oncely = (pipelined: boolean) =>
      oncelyLeaseSubject(
        pipelined ? `${ONCELY} + enableAutoPipelining` : ONCELY,
        createIdempotency({ store: redisStore({ client: client(pipelined), prefix: `${prefix}:oncely:` }) }),
      );
    addSubject(oncely(false), false, true);
    addSubject(oncely(true), true, true);
    addSubject(await nodeIdempotencySubject(redis.url, prefix), false, false);
    addSubject(await powertoolsSubject(redis.url, prefix), false, false);
    addSubject(await expressIdempotencySubject(redis.url, prefix), false, false);

    const counts = new Map<string, { first: CommandsPerOperation; replay: CommandsPerOperation }>();
    for (const entry of entries.filter((e) => !e.pipelined)) {
      counts.set(entry.ops.name, await countCommands(redis.url, entry.ops, `${prefix}-${counts.size}`, options.countOps));
    }
    await flush();
    report.section('Redis: commands per operation (counted by the server)', roundTripTable(counts));

    const results = new Map<string, AlternatingResult>();
    for (const workload of ['first', 'replay'] as const) {
      for (const concurrency of CONCURRENCIES) {
        const timing = { concurrency, durationMs: options.durationMs };
        const active = entries.filter((e) => concurrency > 1 || !e.pipelined);
        const contenders = [];
        for (const [index, entry] of active.entries()) {
          const keyPrefix = `${prefix}-${workload}${concurrency}-${index}`;
          contenders.push(
            workload === 'first'
              ? firstRequestContender(entry.ops, timing, keyPrefix)
              : replayContender(entry.ops, timing, await seedKeys(entry.ops, keyPrefix, options.replayKeys)),
          );
        }
        const result = await alternate(contenders, options.rounds);
        results.set(`${workload}${concurrency}`, result);
        await flush();
        report.section(
          `Redis: ${workload === 'first' ? 'first requests (unique keys)' : 'replays'}, concurrency ${concurrency}`,
          throughputTable(
            result,
            active.map((e) => ({ name: e.ops.name, baseline: e.ops.name === e.baseline ? undefined : e.baseline })),
          ),
        );
      }
    }

    const races: RaceResult[] = [];
    for (const entry of entries) {
      if (!entry.subject || entry.pipelined) continue;
      races.push(
        await runRace(entry.subject, {
          keys: options.raceKeys,
          duplicates: options.raceDuplicates,
          keysInFlight: 8,
          keyPrefix: `${prefix}-race${races.length}`,
        }),
      );
    }
    await flush();
    report.section(
      `Redis: race, ${options.raceKeys.toLocaleString('en-US')} keys × ${options.raceDuplicates} concurrent duplicates`,
      [raceTable(races), '', 'Every duplicate of a key is fired at once through one client connection; 8 keys are in flight at a time.'].join('\n'),
    );
    report.section('Redis: headline ratios (median of per-round ratios)', headlineTable(results, entries, options.rounds));
  } finally {
    for (const c of clients) c.disconnect();
    await Promise.allSettled(entries.map((e) => e.ops.close()));
  }
}

function roundTripTable(counts: Map<string, { first: CommandsPerOperation; replay: CommandsPerOperation }>): string {
  const rows = [...counts].map(([name, c]) => [
    name,
    c.first.sent.toFixed(2),
    c.replay.sent.toFixed(2),
    c.first.breakdown,
    c.replay.breakdown,
  ]);
  return [
    markdownTable(
      [
        'contender',
        'commands sent / first request',
        'commands sent / replay',
        'INFO commandstats / first request',
        'INFO commandstats / replay',
      ],
      rows,
    ),
    '',
    'Sent commands come from `MONITOR` (client commands only); `INFO commandstats` deltas also count the',
    'commands a Lua script runs inside the server. Counted over sequential, unpipelined calls.',
  ].join('\n');
}

function headlineTable(results: Map<string, AlternatingResult>, entries: readonly Entry[], rounds: number): string {
  const oncely = entries.filter((e) => e.oncely);
  if (oncely.length === 0) return '_@oncely/redis is not built in this tree: no oncely contender ran._';
  const rows: string[][] = [];
  for (const [key, result] of results) {
    for (const entry of oncely) {
      if (!result.byName.has(entry.ops.name)) continue;
      const cells = [key.replace(/(\d+)$/, ', c=$1'), entry.ops.name, formatRatio(medianRatio(result, entry.ops.name, entry.baseline))];
      for (const peer of entries.filter((e) => e.subject && !e.oncely)) {
        cells.push(formatRatio(medianRatio(result, entry.ops.name, peer.ops.name)));
      }
      rows.push(cells);
    }
  }
  const peers = entries.filter((e) => e.subject && !e.oncely).map((e) => `oncely / ${e.ops.name}`);
  return [
    markdownTable(['workload', 'oncely contender', 'oncely / raw baseline', ...peers], rows),
    '',
    `Each ratio is the median over ${rounds} rounds of (oncely ops/s ÷ other ops/s) measured in the same round.`,
  ].join('\n');
}
