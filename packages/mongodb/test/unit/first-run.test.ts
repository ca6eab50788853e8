import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../../first-run/checks.js';
import { CHECKS, withQuery } from '../../first-run/checks.js';
import { boundedAbove, keysExamined, planStages, readsById } from '../../first-run/explain.js';
import { EXIT, exitCode, maskCredentials, renderReport, type TargetReport } from '../../first-run/report.js';

const packageDir = join(import.meta.dirname, '..', '..');
const environment = { date: '2026-12-01T00:00:00.000Z', node: 'v20.20.2', drivers: ['mongodb 7.9.0', 'mongodb 6.22.0'], platform: 'linux x64' };
const check = (status: CheckResult['status'], id: string = status): CheckResult => ({ id, title: `check ${id}`, status, details: [`${id} details`] });
const target = (checks: CheckResult[], over: Partial<TargetReport> = {}): TargetReport => ({
  label: 'MONGODB_URL',
  url: 'mongodb://admin:secret@db:27017/?replicaSet=rs0',
  deployment: 'replica_set',
  checks,
  suites: { files: [{ file: 'test/real-server/store.test.ts', passed: 200, failed: 0, skipped: 2 }], failures: [] },
  ...over,
});

describe('the first-run script (npm run test:real-server)', () => {
  it('without MONGODB_URL it says so, lists what it would check, and exits 2', async () => {
    const env = { ...process.env, MONGODB_URL: '', MONGODB_MONGOS_URL: '' };
    const run = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'first-run/main.ts'], { cwd: packageDir, env }).then(
      () => ({ code: 0, stdout: '' }),
      (error: { code: number; stdout: string }) => error,
    );
    expect(run.code).toBe(EXIT.noServer);
    expect(run.stdout).toContain('**Nothing ran: MONGODB_URL is not set.** (exit code 2)');
    for (const { title } of CHECKS) expect(run.stdout).toContain(`- ${title}`);
  });

  it('the report is Markdown a maintainer can paste: one table of checks per deployment, suite counts, failures, credentials masked', () => {
    const report = renderReport(environment, [
      target([check('passed'), check('not_run')]),
      target([check('passed', 'refusal')], {
        label: 'MONGODB_MONGOS_URL',
        url: 'mongodb://router:27018/',
        deployment: 'sharded',
        suites: { files: [{ file: 'test/real-server/journal.test.ts', passed: 33, failed: 1, skipped: 0 }], failures: [{ test: 'journal > begin | resumes', message: 'expected 1\nto be 2' }] },
      }),
    ]);
    expect(report).toContain('**Result: something FAILED (see below)** (exit code 1)');
    expect(report).toContain('### MONGODB_URL: `mongodb://***@db:27017/?replicaSet=rs0` (replica_set)');
    expect(report).not.toContain('secret');
    expect(report).toContain('| check passed | ✅ passed | passed details |');
    expect(report).toContain('| check not_run | ⏭️ not run | not_run details |');
    expect(report).toContain('| test/real-server/store.test.ts | 200 | 0 | 2 |');
    expect(report).toContain('- `journal > begin \\| resumes`: expected 1');
    expect(report).not.toContain('to be 2');
  });

  it('exit codes: 0 when everything passed, 3 when some checks could not run, 1 on any failure', () => {
    expect(exitCode([target([check('passed')])])).toBe(EXIT.passed);
    expect(exitCode([target([check('passed'), check('not_run')])])).toBe(EXIT.incomplete);
    expect(exitCode([target([check('not_run'), check('failed')])])).toBe(EXIT.failed);
    expect(exitCode([target([check('passed')], { suites: { files: [], failures: [{ test: 't', message: 'm' }] } })])).toBe(EXIT.failed);
    expect(exitCode([target([], { error: 'connection refused' })])).toBe(EXIT.failed);
  });

  it('options are appended to connection strings of every form, and credentials never reach the report', () => {
    expect(withQuery('mongodb://db:27017', 'w=1')).toBe('mongodb://db:27017/?w=1');
    expect(withQuery('mongodb://db:27017/app', 'w=1')).toBe('mongodb://db:27017/app?w=1');
    expect(withQuery('mongodb://db:27017/?replicaSet=rs0', 'w=1')).toBe('mongodb://db:27017/?replicaSet=rs0&w=1');
    expect(maskCredentials('mongodb+srv://u:p@cluster.example.net/db')).toBe('mongodb+srv://***@cluster.example.net/db');
  });
});

describe('reading explain output of the supported servers (shapes from the server documentation)', () => {
  const ixscan = (upper: string) => ({ stage: 'IXSCAN', indexName: 'oncely_expires_at_ttl', indexBounds: { expiresAt: [`[MinKey, ${upper}]`] } });

  it('finds the stages of classic, SBE and router plans, but not of rejected plans', () => {
    const classic = { queryPlanner: { winningPlan: { stage: 'UPDATE', inputStage: { stage: 'IDHACK' } }, rejectedPlans: [{ stage: 'COLLSCAN' }] } };
    const sbe = { queryPlanner: { winningPlan: { queryPlan: { stage: 'LIMIT', inputStage: { stage: 'FETCH', inputStage: ixscan('new Date(1)') } }, slotBasedPlan: {} } } };
    const router = { queryPlanner: { winningPlan: { stage: 'SINGLE_SHARD', shards: [{ shardName: 's0', winningPlan: { stage: 'EXPRESS_IXSCAN' } }] } } };
    expect(planStages(classic).map((stage) => stage.stage)).toEqual(['UPDATE', 'IDHACK']);
    expect(planStages(sbe).map((stage) => stage.stage)).toEqual(['LIMIT', 'FETCH', 'IXSCAN']);
    expect(planStages(router).map((stage) => stage.stage)).toEqual(['SINGLE_SHARD', 'EXPRESS_IXSCAN']);
    expect(readsById(planStages(classic))).toBe(true);
    expect(readsById(planStages(router))).toBe(true);
    expect(readsById([{ stage: 'UPDATE' }, { stage: 'COLLSCAN' }])).toBe(false);
  });

  it('an index scan is bounded above unless an interval runs to MaxKey', () => {
    expect(boundedAbove(ixscan('new Date(1764547200000)'), 'expiresAt')).toBe(true);
    expect(boundedAbove(ixscan('MaxKey'), 'expiresAt')).toBe(false);
    expect(boundedAbove({ stage: 'IXSCAN' }, 'expiresAt')).toBe(false);
  });

  it('keys examined come from the top of executionStats, or from the shards behind a router', () => {
    expect(keysExamined({ executionStats: { totalKeysExamined: 5 } })).toBe(5);
    expect(keysExamined({ executionStats: { executionStages: { shards: [{ totalKeysExamined: 2 }, { totalKeysExamined: 3 }] } } })).toBe(5);
    expect(keysExamined({})).toBeUndefined();
    // An aggregation: in its first stage's $cursor, or per shard behind a router.
    expect(keysExamined({ stages: [{ $cursor: { executionStats: { totalKeysExamined: 4 } } }, { $project: {} }] })).toBe(4);
    expect(keysExamined({ shards: { s0: { executionStats: { totalKeysExamined: 1 } }, s1: { stages: [{ $cursor: { executionStats: { totalKeysExamined: 2 } } }] } } })).toBe(3);
    expect(keysExamined({ shards: { s0: {} } })).toBeUndefined();
  });
});
