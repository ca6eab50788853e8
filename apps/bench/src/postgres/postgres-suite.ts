import type { BenchOptions } from '../cli/options.js';
import { type AlternatingResult, alternate, type Contender, medianRatio } from '../harness/alternating.js';
import { formatRatio, markdownTable } from '../harness/markdown.js';
import { runRace } from '../harness/race.js';
import { type RaceRow, raceTable } from '../harness/race-table.js';
import type { Report } from '../harness/report.js';
import { throughputTable } from '../harness/throughput-table.js';
import { firstRequestContender, replayContender, seedKeys, type TimingOptions } from '../harness/workload-runs.js';
import type { Operations } from '../subjects/operations.js';
import { paymentEffect } from '../subjects/payment-effect.js';
import { type Backend, pgBackend, pgliteBackend, postgresJsBackend } from './backends.js';
import { ensureBenchDatabase } from './bench-database.js';
import { postgresContenders } from './contenders.js';
import { countRoundTrips, type PerOperation } from './count-round-trips.js';

const POOL_SIZE = 16;
/** The untimed run on a renewed driver instance before each timed one (see {@link renewing}). */
const WARM_MS = 300;

/**
 * oncely on PostgreSQL (shared server, own database; through pg and postgres.js) and PGlite: lease mode against the raw driver
 * running the same statements, transactional mode with and without oncely around the same business
 * transaction, round trips counted, and the race.
 */
export async function runPostgresSuite(options: BenchOptions, report: Report): Promise<void> {
  const url = await ensureBenchDatabase(options.databaseUrl);
  for (const open of [() => pgBackend(url, POOL_SIZE), () => postgresJsBackend(url, POOL_SIZE), () => pgliteBackend()]) {
    const backend = await open();
    try {
      await benchBackend(backend, options, report);
    } finally {
      await backend.close();
    }
  }
}

async function benchBackend(backend: Backend, options: BenchOptions, report: Report): Promise<void> {
  const { label } = backend;
  const prefix = `pg${Date.now().toString(36)}`;
  const effect = paymentEffect(false);
  const counted = postgresContenders(label, backend.counted, effect);
  const counts = new Map<string, { first: PerOperation; replay?: PerOperation }>();
  for (const ops of [counted.rawLease, counted.oncelyLease, counted.businessOnly, counted.recordFloor, counted.rawTransactional, counted.oncelyTransactional, counted.oncelyLockClaim]) {
    counts.set(
      ops.name,
      await countRoundTrips(backend.counter, ops, `${prefix}-${counts.size}`, options.countOps, ops !== counted.businessOnly && ops !== counted.recordFloor && ops !== counted.rawTransactional),
    );
  }
  await backend.truncate();
  report.section(`${label}: round trips per operation`, roundTripTable(counts, backend.countedBy));

  const timed = postgresContenders(label, backend.timed, effect);
  const results = new Map<string, AlternatingResult>();
  for (const concurrency of backend.concurrencies) {
    const timing = { concurrency, durationMs: options.durationMs };
    const warmTiming = { concurrency, durationMs: Math.min(WARM_MS, options.durationMs) };
    const workloads: [string, Operations[], 'first' | 'replay'][] = [
      ['lease mode, first requests', [timed.rawLease, timed.oncelyLease], 'first'],
      ['transactional mode, first requests', [timed.businessOnly, timed.recordFloor, timed.rawTransactional, timed.oncelyTransactional, timed.oncelyLockClaim], 'first'],
      ['replays', [timed.rawLease, timed.oncelyLease, timed.oncelyTransactional, timed.oncelyLockClaim], 'replay'],
    ];
    for (const [title, list, kind] of workloads) {
      const contenders = [];
      for (const [index, ops] of list.entries()) {
        const keyPrefix = `${prefix}-c${concurrency}-${kind}-${index}`;
        const keys = kind === 'replay' ? await seedKeys(ops, keyPrefix, options.replayKeys) : [];
        const contender = (runTiming: TimingOptions, runPrefix: string) =>
          kind === 'first' ? firstRequestContender(ops, runTiming, runPrefix) : replayContender(ops, runTiming, keys);
        contenders.push(renewing(backend, contender(timing, keyPrefix), contender(warmTiming, `${keyPrefix}-warm`)));
      }
      const result = await alternate(contenders, options.rounds);
      results.set(`${title}, c=${concurrency}`, result);
      await backend.truncate();
      const baseline = list[0]!.name;
      report.section(
        `${label}: ${title}, concurrency ${concurrency}`,
        throughputTable(
          result,
          list.map((ops, i) => ({ name: ops.name, baseline: i === 0 ? undefined : baseline })),
        ),
      );
    }
  }

  const races: RaceRow[] = [];
  for (const ops of [timed.oncelyLease, timed.oncelyTransactional, timed.oncelyLockClaim]) {
    const keyPrefix = `${prefix}-race${races.length}`;
    const race = await runRace(ops.subject, {
      keys: options.raceKeys,
      duplicates: options.raceDuplicates,
      keysInFlight: 8,
      keyPrefix,
    });
    races.push(ops !== timed.oncelyLease ? { ...race, committedRows: await backend.paymentRows(keyPrefix) } : race);
  }
  await backend.truncate();
  report.section(
    `${label}: race, ${options.raceKeys.toLocaleString('en-US')} keys × ${options.raceDuplicates} concurrent duplicates`,
    [
      raceTable(races),
      '',
      `Lease mode runs the effect outside the database (counted in-process); transactional mode inserts a payment row in the`,
      `claim's transaction, so "business rows committed" is read back from the payments table. Pool: ${POOL_SIZE} connections; 8 keys in flight.`,
    ].join('\n'),
  );
  report.section(`${label}: headline ratios`, headline(results, timed));
}

/**
 * `contender`, each run of it on a fresh driver instance where the backend renews one, after an
 * untimed run of `warm` on it: every connection of the new instance prepares its statements first.
 */
function renewing(backend: Backend, contender: Contender, warm: Contender): Contender {
  const { renew } = backend;
  if (renew === undefined) return contender;
  return {
    name: contender.name,
    async run() {
      await renew();
      await warm.run();
      return contender.run();
    },
  };
}

function roundTripTable(counts: Map<string, { first: PerOperation; replay?: PerOperation }>, countedBy: string): string {
  const rows = [...counts].map(([name, c]) => [
    name,
    c.first.roundTrips.toFixed(2),
    c.first.statements.toFixed(2),
    c.replay ? c.replay.roundTrips.toFixed(2) : 'n/a',
    c.replay ? c.replay.statements.toFixed(2) : 'n/a',
  ]);
  return [
    markdownTable(['contender', 'round trips / first request', 'statements / first request', 'round trips / replay', 'statements / replay'], rows),
    '',
    `Counted by ${countedBy}, over sequential calls.`,
  ].join('\n');
}

function headline(results: Map<string, AlternatingResult>, timed: ReturnType<typeof postgresContenders>): string {
  const rows: string[][] = [];
  for (const [workload, result] of results) {
    const [baseline, ...others] = [...result.byName.keys()];
    for (const name of others) rows.push([workload, `${name} ÷ ${baseline}`, formatRatio(medianRatio(result, name, baseline!))]);
    // Transactional mode against the same work done raw: the claim and complete are writes the bare transaction lacks.
    const sameWork = timed.rawTransactional.name;
    for (const oncely of [timed.oncelyTransactional.name, timed.oncelyLockClaim.name]) {
      if (result.byName.has(sameWork) && result.byName.has(oncely)) {
        rows.push([workload, `${oncely} ÷ ${sameWork}`, formatRatio(medianRatio(result, oncely, sameWork))]);
      }
    }
  }
  return [
    markdownTable(['workload', 'ratio', 'median of per-round ratios'], rows),
    '',
    `Transactional rows compare \`${timed.oncelyTransactional.name}\` with the same payment insert in a bare BEGIN/COMMIT, and with`,
    `\`${timed.rawTransactional.name}\`: that transaction plus the raw claim insert and complete update (the same work without oncely).`,
    `\`${timed.recordFloor.name}\` is the bare transaction whose one statement also inserts the completed record (one row more,`,
    `the same round trips, no claim): what any layer that commits its record with the business writes pays at the least.`,
  ].join('\n');
}
