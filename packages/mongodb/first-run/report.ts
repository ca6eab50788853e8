import type { CheckResult } from './checks.js';

// The Markdown a maintainer pastes into an issue after a first run: what ran where, each check's
// outcome with the figures behind it, and the real-server suites' counts and failures.

/** One run of the real-server test files (vitest's JSON report, reduced). */
export interface SuiteRun {
  readonly files: readonly { readonly file: string; readonly passed: number; readonly failed: number; readonly skipped: number }[];
  readonly failures: readonly { readonly test: string; readonly message: string }[];
  /** Set when vitest itself could not run or report. */
  readonly error?: string;
}

/** Everything run against one deployment. */
export interface TargetReport {
  readonly label: string;
  readonly url: string;
  readonly deployment: string;
  readonly checks: readonly CheckResult[];
  readonly suites?: SuiteRun;
  /** Set when the target could not be reached at all. */
  readonly error?: string;
}

/** What the environment was. */
export interface RunEnvironment {
  readonly date: string;
  readonly node: string;
  readonly drivers: readonly string[];
  readonly platform: string;
}

/** Exit codes of `npm run test:real-server`, documented in the README. */
export const EXIT = { passed: 0, failed: 1, noServer: 2, incomplete: 3 } as const;

const MARK = { passed: '✅ passed', failed: '❌ failed', not_run: '⏭️ not run' } as const;

/** The connection string with any user and password replaced. */
export function maskCredentials(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The exit code of a run: failed beats incomplete, which beats passed. */
export function exitCode(targets: readonly TargetReport[]): number {
  const all = targets.flatMap((target) => target.checks);
  const suitesFailed = targets.some((target) => target.error || target.suites?.error || (target.suites?.failures.length ?? 0) > 0);
  if (suitesFailed || all.some((check) => check.status === 'failed')) return EXIT.failed;
  if (all.some((check) => check.status === 'not_run')) return EXIT.incomplete;
  return EXIT.passed;
}

const VERDICT: Record<number, string> = {
  [EXIT.passed]: 'every check and every suite passed',
  [EXIT.failed]: 'something FAILED (see below)',
  [EXIT.incomplete]: 'everything that ran passed, but some checks could not run here (see why below)',
};

/** The report of a run against one or more deployments. */
export function renderReport(environment: RunEnvironment, targets: readonly TargetReport[]): string {
  const code = exitCode(targets);
  const lines = [
    '## @oncely/mongodb: first real-server run',
    '',
    `**Result: ${VERDICT[code]}** (exit code ${code})`,
    '',
    `- date: ${environment.date}`,
    `- Node ${environment.node} on ${environment.platform}`,
    `- drivers: ${environment.drivers.join(', ')}`,
  ];
  for (const target of targets) {
    lines.push('', `### ${target.label}: \`${maskCredentials(target.url)}\` (${target.deployment})`, '');
    if (target.error) {
      lines.push(`❌ could not run: ${cell(target.error)}`);
      continue;
    }
    lines.push('| Check | Result | Details |', '| --- | --- | --- |');
    for (const check of target.checks) lines.push(`| ${cell(check.title)} | ${MARK[check.status]} | ${cell(check.details.join('; '))} |`);
    if (!target.suites) continue;
    lines.push('', '#### Real-server suites (`test/real-server`, both driver majors)', '');
    if (target.suites.error) lines.push(`❌ ${cell(target.suites.error)}`, '');
    lines.push('| File | Passed | Failed | Skipped |', '| --- | ---: | ---: | ---: |');
    for (const file of target.suites.files) lines.push(`| ${file.file} | ${file.passed} | ${file.failed} | ${file.skipped} |`);
    if (target.suites.failures.length > 0) {
      lines.push('', 'Failures:', '');
      for (const failure of target.suites.failures) lines.push(`- \`${cell(failure.test)}\`: ${cell(failure.message.split('\n')[0] ?? '')}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** What a run without a server prints: nothing ran, how to run it, and what it would check. */
export function renderNoServer(environment: RunEnvironment, checkTitles: readonly string[]): string {
  return [
    '## @oncely/mongodb: first real-server run',
    '',
    `**Nothing ran: MONGODB_URL is not set.** (exit code ${EXIT.noServer})`,
    '',
    `- date: ${environment.date}`,
    `- Node ${environment.node} on ${environment.platform}`,
    `- drivers: ${environment.drivers.join(', ')}`,
    '',
    'Point it at a replica set (and, optionally, at a mongos of a sharded cluster) started with',
    '`--setParameter enableTestCommands=1`, as a user allowed to run `setParameter` and `configureFailPoint`:',
    '',
    '```sh',
    'MONGODB_URL="mongodb://localhost:27017/?replicaSet=rs0" \\',
    'MONGODB_MONGOS_URL="mongodb://localhost:27018/" \\',
    '  npm run -s test:real-server -w @oncely/mongodb > report.md',
    '```',
    '',
    'Before the real-server suites it checks, on each deployment:',
    '',
    ...checkTitles.map((title) => `- ${title}`),
    '',
  ].join('\n');
}
