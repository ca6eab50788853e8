import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { type BenchOptions, parseOptions, type SuiteName } from './cli/options.js';
import { describeMachine, localMachine, type MachineInfo } from './harness/machine.js';
import { createReport, type Report } from './harness/report.js';
import { forwardingReport, ownSuite, runInOwnProcess } from './harness/suite-process.js';
import { runEngineSuite } from './engine/engine-suite.js';
import { runHttpSuite } from './http/http-suite.js';
import type { BindingName } from './http/servers/bindings.js';
import { runJitterSuite } from './jitter/jitter-suite.js';
import { runBrokersSuite } from './outbox/brokers-suite.js';
import { runOutboxDrainSuite } from './outbox/drain-suite.js';
import { runOutboxSuite } from './outbox/outbox-suite.js';
import { dropBenchDatabase } from './postgres/bench-database.js';
import { runBridgesSuite } from './postgres/bridges-suite.js';
import { runPostgresSuite } from './postgres/postgres-suite.js';
import { runRecoverySuite } from './recovery/recovery-suite.js';
import { runRedisSuite } from './redis/redis-suite.js';
import { type PrivateRedis, startPrivateRedis } from './servers/private-redis.js';

const resultsDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'results');

/** The installed version of `name`, read from its package.json (which its exports may hide). */
async function packageVersion(name: string): Promise<string> {
  let dir = dirname(createRequire(import.meta.url).resolve(name));
  while (!dir.endsWith(join('node_modules', name))) dir = dirname(dir);
  return (JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

async function serverVersions(redis: PrivateRedis | undefined, options: BenchOptions): Promise<Partial<MachineInfo>> {
  const info: { redis?: string; postgres?: string; pglite?: string } = {};
  if (redis) {
    const client = new Redis(redis.url);
    const server = await client.info('server');
    client.disconnect();
    info.redis = `${/redis_version:(\S+)/.exec(server)?.[1] ?? 'unknown'} (private redis-server on port ${redis.port}, no persistence)`;
  }
  if (options.suites.some((s) => s !== 'jitter' && s !== 'redis')) {
    const client = new pg.Client({ connectionString: options.databaseUrl });
    await client.connect();
    const { rows } = await client.query<{ version: string }>('SELECT version()');
    await client.end();
    info.postgres = rows[0]!.version.split(' on ')[0]!;
    info.pglite = await packageVersion('@electric-sql/pglite');
  }
  return info;
}

/** Runs one suite, in whichever process. */
async function runSuite(suite: SuiteName, options: BenchOptions, report: Report, redis: PrivateRedis | undefined, stem: string) {
  if (suite === 'jitter') await runJitterSuite(options, report, `${stem}-jitter.svg`);
  if (suite === 'engine') await runEngineSuite(options, report);
  if (suite === 'redis') await runRedisSuite(redis!, options, report);
  if (suite === 'postgres') await runPostgresSuite(options, report);
  if (suite === 'bridges') await runBridgesSuite(options, report);
  if (suite.startsWith('http-')) await runHttpSuite(suite.slice('http-'.length) as BindingName, redis!, options, report);
  if (suite === 'outbox') await runOutboxSuite(redis!, options, report);
  if (suite === 'outbox-drain') await runOutboxDrainSuite(redis!, options, report);
  if (suite === 'brokers') await runBrokersSuite(redis!, options, report);
  if (suite === 'recovery') await runRecoverySuite(options, report);
}

const stemOf = (options: BenchOptions, date: string) => (options.mode === 'full' ? date : `${date}-quick`);

/** A suite's own process: the bench's process started the private Redis and writes the report. */
async function runForkedSuite(suite: SuiteName, options: BenchOptions): Promise<void> {
  const report = forwardingReport();
  const redis = { url: `redis://127.0.0.1:${options.redisPort}`, port: options.redisPort, stop: async () => undefined };
  try {
    await runSuite(suite, options, report, redis, stemOf(options, new Date().toISOString().slice(0, 10)));
    await report.flushed();
  } finally {
    process.disconnect();
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const forked = ownSuite();
  if (forked) {
    const suite = options.suites.find((name) => name === forked);
    if (!suite) throw new Error(`bench: asked to run unknown suite ${forked}`);
    return runForkedSuite(suite, options);
  }
  const started = new Date();
  const needsRedis = options.suites.some((s) => s === 'redis' || s.startsWith('http-') || s.startsWith('outbox') || s === 'brokers');
  const redis = needsRedis ? await startPrivateRedis(options.redisPort) : undefined;
  try {
    const machine = { ...localMachine(), ...(await serverVersions(redis, options)) };
    const date = started.toISOString().slice(0, 10);
    const report = createReport(
      [
        `# oncely benchmarks — ${date} (${options.mode})`,
        '',
        describeMachine(machine),
        `- Runs: ${options.rounds} alternating rounds per comparison; ${options.durationMs} ms per in-process run; suites: ${options.suites.join(', ')}`,
        '',
      ].join('\n'),
    );
    const stem = stemOf(options, date);
    const timings: string[] = [];
    for (const suite of options.suites) {
      const suiteStarted = Date.now();
      // Each suite in a fresh process: no suite runs on code another suite's stores left polymorphic.
      await runInOwnProcess(suite, report);
      timings.push(`${suite} ${((Date.now() - suiteStarted) / 1000).toFixed(0)} s`);
    }
    report.section('Run time', `Wall-clock time per suite: ${timings.join(', ')}.`);
    const file = await report.write(resultsDir, `${stem}.md`);
    console.log(`bench: wrote ${file} in ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s`);
  } finally {
    await redis?.stop();
    // After every suite: postgres, http and outbox all use the bench's database, and each ends its sessions.
    if (options.suites.some((s) => s === 'postgres' || s.startsWith('http-') || s.startsWith('outbox') || s === 'brokers')) await dropBenchDatabase(options.databaseUrl);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
