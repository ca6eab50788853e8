import type { BenchOptions } from '../cli/options.js';
import { markdownTable } from '../harness/markdown.js';
import type { Report } from '../harness/report.js';
import { STRATEGIES, type StrategyName } from './backoff-strategies.js';
import { type OccCell, runOccExperiment } from './occ-experiment.js';
import { simulateOpenLoop } from './open-loop.js';
import { QUOTAS } from './retry-quotas.js';
import { svgLineCharts } from './svg-line-chart.js';

const LABELS: Record<StrategyName, string> = {
  none: 'no backoff',
  exponential: 'exponential',
  equal: 'equal jitter',
  full: 'full jitter (oncely)',
  decorrelated: 'decorrelated jitter',
};

/** The article's findings, checked on every client count. */
const CLAIMS: readonly { readonly text: string; readonly holds: (at: (s: StrategyName) => OccCell) => boolean }[] = [
  {
    text: 'every jittered schedule makes fewer calls than no backoff and than plain exponential',
    holds: (at) =>
      (['equal', 'full', 'decorrelated'] as const).every(
        (s) => at(s).meanCalls < at('none').meanCalls && at(s).meanCalls < at('exponential').meanCalls,
      ),
  },
  { text: 'full jitter makes the fewest calls of all', holds: (at) => STRATEGIES.every((s) => at('full').meanCalls <= at(s).meanCalls) },
  { text: 'equal jitter makes more calls than full jitter', holds: (at) => at('equal').meanCalls > at('full').meanCalls },
  {
    text: 'equal jitter takes longer than full and decorrelated jitter',
    holds: (at) =>
      at('equal').meanCompletionMs > at('full').meanCompletionMs &&
      at('equal').meanCompletionMs > at('decorrelated').meanCompletionMs,
  },
  {
    text: 'decorrelated jitter finishes sooner than full jitter, with more calls',
    holds: (at) =>
      at('decorrelated').meanCompletionMs < at('full').meanCompletionMs && at('decorrelated').meanCalls > at('full').meanCalls,
  },
  {
    text: 'plain exponential backoff takes the longest',
    holds: (at) => STRATEGIES.every((s) => at('exponential').meanCompletionMs >= at(s).meanCompletionMs),
  },
];

/** Brooker's contention experiment on a fake clock, then the open-loop retry-budget scenario. */
export async function runJitterSuite(options: BenchOptions, report: Report, plotName: string): Promise<void> {
  const clientCounts = options.mode === 'quick' ? [10, 50, 100, 200] : [10, 25, 50, 75, 100, 150, 200];
  const cells = runOccExperiment({ clientCounts, seeds: options.jitterSeeds });
  const at = (clients: number) => (strategy: StrategyName) =>
    cells.find((c) => c.clients === clients && c.strategy === strategy)!;

  const metricTable = (metric: (c: OccCell) => number) =>
    markdownTable(
      ['clients', ...STRATEGIES.map((s) => LABELS[s])],
      clientCounts.map((n) => [n, ...STRATEGIES.map((s) => Math.round(metric(at(n)(s))).toLocaleString('en-US'))]),
    );
  report.section(
    'Jitter simulation: N clients contending on one row (optimistic concurrency)',
    [
      `Setup as in Marc Brooker's simulator for "Exponential Backoff And Jitter" (AWS Architecture Blog, 2015): every client`,
      'reads a version and writes it back conditioned on it; one write per version wins; losers back off and read again.',
      `Network delay |normal(10 ms, 2 ms)| per message, base 5 ms, cap 2,000 ms; the retry after the n-th failure sleeps`,
      `schedule(n). Means over ${options.jitterSeeds} seeds per cell; seed i is the same for every schedule. "full jitter (oncely)"`,
      "is `fullJitter` from @oncely/core. Fake clock: the whole experiment takes no wall-clock waiting.",
      '',
      '**Total write calls (work)**',
      '',
      metricTable((c) => c.meanCalls),
      '',
      '**Time until the last client succeeds (simulated ms)**',
      '',
      metricTable((c) => c.meanCompletionMs),
      '',
      "**The article's ordering, checked per client count**",
      '',
      markdownTable(
        ['finding', ...clientCounts.map((n) => `N=${n}`)],
        CLAIMS.map((claim) => [claim.text, ...clientCounts.map((n) => (claim.holds(at(n)) ? 'holds' : 'does not hold'))]),
      ),
      '',
      `![calls and completion time by schedule](${plotName})`,
    ].join('\n'),
  );
  const series = (metric: (c: OccCell) => number) =>
    STRATEGIES.map((s) => ({ name: LABELS[s], points: clientCounts.map((n) => [n, metric(at(n)(s))] as const) }));
  report.attach(
    plotName,
    svgLineCharts([
      { title: 'Work: total write calls', xLabel: 'clients', yLabel: 'calls', series: series((c) => c.meanCalls) },
      {
        title: 'Time until all clients succeed',
        xLabel: 'clients',
        yLabel: 'simulated ms',
        series: series((c) => c.meanCompletionMs),
      },
    ]),
  );

  const probabilities = [0, 0.01, 0.1, 0.3, 0.5, 0.9, 1];
  const runs = probabilities.map((p) =>
    QUOTAS.map((quota) =>
      simulateOpenLoop({ quota, failureProbability: p, ratePerSec: 100, durationSec: 120, warmupSec: 30, seed: 7 }),
    ),
  );
  report.section(
    'Retry budgets: open-loop load when a dependency fails with probability p',
    [
      'Poisson arrivals at 100 logical requests/s for 120 simulated s (after 30 s of warm-up that fills the windows); every',
      "attempt fails independently with probability p; oncely's default policy (3 attempts in total, full jitter from 100 ms)",
      'asks the quota before each retry. AWS SDK v3 standard quota: 500 tokens, a retry costs 5, a success refunds the cost',
      "of its retry or earns 1. oncely's `retryBudget()` defaults: 10 % of requests plus 1 retry/s, over a 10 s window.",
      '',
      '**Attempts per logical request (load on the dependency)**',
      '',
      markdownTable(
        ['p', ...QUOTAS],
        probabilities.map((p, i) => [p, ...runs[i]!.map((r) => r.attemptsPerRequest.toFixed(3))]),
      ),
      '',
      '**Logical requests that eventually succeeded**',
      '',
      markdownTable(
        ['p', ...QUOTAS],
        probabilities.map((p, i) => [p, ...runs[i]!.map((r) => `${(r.successRate * 100).toFixed(1)} %`)]),
      ),
    ].join('\n'),
  );
}
