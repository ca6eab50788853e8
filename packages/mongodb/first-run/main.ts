import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHECKS, runChecks } from './checks.js';
import { EXIT, exitCode, renderNoServer, renderReport, type RunEnvironment, type SuiteRun, type TargetReport } from './report.js';

// `npm run test:real-server -w @oncely/mongodb`: the first run against a real deployment. The checks
// run first, then every real-server test file (vitest, progress on stderr); the Markdown report goes
// to stdout. Exit codes: 0 all passed, 1 something failed, 2 MONGODB_URL not set, 3 some checks
// could not run (missing test commands or privileges) and the rest passed.

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

function environment(): RunEnvironment {
  const version = (name: string) => (require(`${name}/package.json`) as { version: string }).version;
  return {
    date: new Date().toISOString(),
    node: process.version,
    drivers: [`mongodb ${version('mongodb')}`, `mongodb ${version('mongodb6')}`],
    platform: `${process.platform} ${process.arch}`,
  };
}

interface VitestJson {
  testResults?: { name: string; assertionResults: { fullName: string; status: string; failureMessages: string[] }[]; message?: string }[];
}

/** Runs every real-server test file against `url` and reduces vitest's JSON report. */
async function runSuites(url: string): Promise<SuiteRun> {
  const folder = mkdtempSync(join(tmpdir(), 'oncely-first-run-'));
  const output = join(folder, 'vitest.json');
  const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
  try {
    const code = await new Promise<number>((resolve, reject) => {
      const child = spawn(process.execPath, [vitest, 'run', 'test/real-server', '--reporter=default', '--reporter=json', `--outputFile.json=${output}`], {
        cwd: packageDir,
        env: { ...process.env, MONGODB_URL: url },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      child.stdout.pipe(process.stderr);
      child.on('error', reject);
      child.on('close', (exit) => resolve(exit ?? 1));
    });
    let report: VitestJson;
    try {
      report = JSON.parse(readFileSync(output, 'utf8')) as VitestJson;
    } catch (error) {
      return { files: [], failures: [], error: `vitest exited ${code} without a report: ${(error as Error).message}` };
    }
    const results = report.testResults ?? [];
    const count = (tests: { status: string }[], status: string) => tests.filter((test) => test.status === status).length;
    return {
      files: results.map((result) => ({
        file: relative(packageDir, result.name),
        passed: count(result.assertionResults, 'passed'),
        failed: count(result.assertionResults, 'failed'),
        skipped: result.assertionResults.length - count(result.assertionResults, 'passed') - count(result.assertionResults, 'failed'),
      })),
      failures: results.flatMap((result) => [
        ...(result.message ? [{ test: relative(packageDir, result.name), message: result.message }] : []),
        ...result.assertionResults
          .filter((test) => test.status === 'failed')
          .map((test) => ({ test: test.fullName, message: test.failureMessages[0] ?? 'failed' })),
      ]),
      error: code !== 0 && results.length === 0 ? `vitest exited ${code}` : undefined,
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

async function target(label: string, url: string): Promise<TargetReport> {
  console.error(`@oncely/mongodb first run: checks on ${label}`);
  try {
    const { deployment, results } = await runChecks(url);
    console.error(`@oncely/mongodb first run: real-server suites on ${label}`);
    return { label, url, deployment: deployment.kind, checks: results, suites: await runSuites(url) };
  } catch (error) {
    return { label, url, deployment: 'unreachable', checks: [], error: (error as Error).message };
  }
}

async function main(): Promise<number> {
  const env = environment();
  const url = process.env.MONGODB_URL;
  if (!url) {
    process.stdout.write(renderNoServer(env, CHECKS.map((check) => check.title)));
    console.error('@oncely/mongodb first run: MONGODB_URL is not set; nothing ran (exit code 2)');
    return EXIT.noServer;
  }
  const targets = [await target('MONGODB_URL', url)];
  const mongos = process.env.MONGODB_MONGOS_URL;
  if (mongos) targets.push(await target('MONGODB_MONGOS_URL', mongos));
  process.stdout.write(renderReport(env, targets));
  return exitCode(targets);
}

process.exitCode = await main();
