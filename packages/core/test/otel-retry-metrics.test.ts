import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ManualClock, manualClock } from '../src/index.js';
import { type MeterLike, type OtelRetryMetricsOptions, otelRetryMetrics } from '../src/otel.js';
import {
  type AttemptContext,
  circuitBreaker,
  type RetryEvent,
  type RetryPolicyOptions,
  retry,
  retryBudget,
  retryPolicy,
} from '../src/retry.js';
import { drive } from './retry/drive.js';

type Attributes = Record<string, string | number | boolean>;
interface Recorded {
  readonly name: string;
  readonly kind: 'counter' | 'histogram';
  readonly value: number;
  readonly attributes: Attributes;
}

/** A meter that keeps every `add` and `record`, in order, with the instrument's name and kind. */
function recordingMeter() {
  const records: Recorded[] = [];
  const created: { name: string; kind: Recorded['kind']; unit: string | undefined }[] = [];
  const meter: MeterLike = {
    createCounter(name, options) {
      created.push({ name, kind: 'counter', unit: options?.unit });
      return { add: (value, attributes = {}) => void records.push({ name, kind: 'counter', value, attributes }) };
    },
    createHistogram(name, options) {
      created.push({ name, kind: 'histogram', unit: options?.unit });
      return { record: (value, attributes = {}) => void records.push({ name, kind: 'histogram', value, attributes }) };
    },
  };
  /** `[value, attributes]` of every record of one instrument, in order. */
  const of = (name: string) => records.filter((record) => record.name === name).map((record) => [record.value, record.attributes]);
  const total = (name: string) => records.filter((record) => record.name === name).reduce((sum, record) => sum + record.value, 0);
  return { meter, records, created, of, total };
}

const status = (code: number, headers: Record<string, string> = {}) => new Response(null, { status: code, headers });
const reset = () => new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });

/**
 * A dependency answering from a script, one entry per attempt (the last repeats); each attempt takes
 * `latencyMs` on the manual clock before it answers.
 */
function scripted(clock: ManualClock, answers: (Response | Error)[], latencyMs = 0) {
  let calls = 0;
  const fn = async ({ signal }: AttemptContext) => {
    const answer = answers[Math.min(calls, answers.length - 1)]!;
    calls += 1;
    if (latencyMs > 0) await clock.sleep(latencyMs, signal);
    if (answer instanceof Error) throw answer;
    return answer.clone();
  };
  return { fn, calls: () => calls };
}

function setup(options: RetryPolicyOptions<Response> = {}, metricsOptions?: OtelRetryMetricsOptions) {
  const clock = (options.clock as ManualClock | undefined) ?? manualClock(1_000_000);
  const recording = recordingMeter();
  const onEvent = otelRetryMetrics(recording.meter, metricsOptions);
  const policy = retryPolicy<Response>({ random: () => 0.5, clock, onEvent, ...options });
  return { clock, onEvent, policy, ...recording };
}

describe('otelRetryMetrics: instruments', () => {
  it('creates the documented counters and millisecond histograms once, when the listener is made', () => {
    const { created } = setup();
    expect(created).toEqual([
      { name: 'oncely.retry.attempts', kind: 'counter', unit: undefined },
      { name: 'oncely.retry.outcomes', kind: 'counter', unit: undefined },
      { name: 'oncely.retry.budget_refused', kind: 'counter', unit: undefined },
      { name: 'oncely.retry.breaker.rejected', kind: 'counter', unit: undefined },
      { name: 'oncely.retry.breaker.transitions', kind: 'counter', unit: undefined },
      { name: 'oncely.retry.attempt.duration', kind: 'histogram', unit: 'ms' },
      { name: 'oncely.retry.sleep', kind: 'histogram', unit: 'ms' },
      { name: 'oncely.retry.duration', kind: 'histogram', unit: 'ms' },
    ]);
  });
});

describe('otelRetryMetrics with a real retry() on a manual clock', () => {
  it('success after retries: attempts by verdict, attempt durations, sleeps and one succeeded outcome', async () => {
    const { clock, policy, of } = setup({ maxAttempts: 4, baseMs: 100, capMs: 250 });
    const { fn } = scripted(clock, [status(503), status(503), status(200)], 30);
    const outcome = await drive(clock, retry(fn, policy), 10);
    expect(outcome).toMatchObject({ outcome: 'succeeded', attempts: 3 });

    const retried = { 'oncely.verdict': 'retry', 'oncely.reason': 'unavailable', 'oncely.effect': 'maybe_applied' };
    expect(of('oncely.retry.attempts')).toEqual([
      [1, retried],
      [1, retried],
      [1, { 'oncely.verdict': 'success' }],
    ]);
    expect(of('oncely.retry.attempt.duration')).toEqual([
      [30, { 'oncely.verdict': 'retry' }],
      [30, { 'oncely.verdict': 'retry' }],
      [30, { 'oncely.verdict': 'success' }],
    ]);
    // random 0.5: floor(0.5 · min(250, 100 · 2^n)) for n = 0, 1.
    expect(of('oncely.retry.sleep')).toEqual([
      [50, { 'oncely.reason': 'unavailable', 'oncely.retry_after': false }],
      [100, { 'oncely.reason': 'unavailable', 'oncely.retry_after': false }],
    ]);
    expect(of('oncely.retry.outcomes')).toEqual([[1, { 'oncely.outcome': 'succeeded', 'oncely.stopped_by': 'answer' }]]);
    // Three 30 ms attempts and 50 + 100 ms of backoff.
    expect(of('oncely.retry.duration')).toEqual([[240, { 'oncely.outcome': 'succeeded' }]]);
    expect(of('oncely.retry.budget_refused')).toEqual([]);
    expect(of('oncely.retry.breaker.rejected')).toEqual([]);
  });

  it('gives up by attempts: failed when every attempt was refused, unknown when one may have applied', async () => {
    const { clock, policy, of, records } = setup({ maxAttempts: 3 });
    const throttled = await drive(clock, retry(scripted(clock, [status(429)]).fn, policy), 10);
    expect(throttled).toMatchObject({ outcome: 'failed', attempts: 3, stoppedBy: 'attempts' });
    expect(of('oncely.retry.attempts')).toEqual(
      Array.from({ length: 3 }, () => [1, { 'oncely.verdict': 'retry', 'oncely.reason': 'throttled', 'oncely.effect': 'not_applied' }]),
    );
    expect(of('oncely.retry.sleep').map(([delay]) => delay)).toEqual([50, 100]);
    expect(of('oncely.retry.outcomes')).toEqual([[1, { 'oncely.outcome': 'failed', 'oncely.stopped_by': 'attempts' }]]);
    expect(of('oncely.retry.duration')).toEqual([[150, { 'oncely.outcome': 'failed' }]]);

    records.length = 0;
    const ambiguous = await drive(clock, retry(scripted(clock, [reset()]).fn, policy, { key: 'k-1' }), 10);
    expect(ambiguous).toMatchObject({ outcome: 'unknown', stoppedBy: 'attempts' });
    expect(of('oncely.retry.attempts').map(([, attributes]) => attributes)).toEqual(
      Array.from({ length: 3 }, () => ({ 'oncely.verdict': 'retry', 'oncely.reason': 'connection_reset', 'oncely.effect': 'maybe_applied' })),
    );
    expect(of('oncely.retry.outcomes')).toEqual([[1, { 'oncely.outcome': 'unknown', 'oncely.stopped_by': 'attempts' }]]);
  });

  it('a definitive failure is one attempt with verdict failure and no reason', async () => {
    const { clock, policy, of } = setup();
    await drive(clock, retry(scripted(clock, [status(422)]).fn, policy), 10);
    expect(of('oncely.retry.attempts')).toEqual([[1, { 'oncely.verdict': 'failure' }]]);
    expect(of('oncely.retry.sleep')).toEqual([]);
    expect(of('oncely.retry.outcomes')).toEqual([[1, { 'oncely.outcome': 'failed', 'oncely.stopped_by': 'answer' }]]);
  });

  it('budget refusal: counts each refused retry and the outcome stopped by the budget', async () => {
    const clock = manualClock(0);
    // 0.5 tokens per call and no reserve: call 1 affords no retry, call 2 affords exactly one.
    const budget = retryBudget({ ratio: 0.5, minRetriesPerSec: 0, clock });
    const { policy, of, total } = setup({ clock, budget, maxAttempts: 5 });
    const first = await drive(clock, retry(scripted(clock, [status(503)]).fn, policy), 10);
    const second = await drive(clock, retry(scripted(clock, [status(503)]).fn, policy), 10);
    expect([first.attempts, second.attempts]).toEqual([1, 2]);
    expect(of('oncely.retry.budget_refused')).toEqual([
      [1, {}],
      [1, {}],
    ]);
    expect(total('oncely.retry.attempts')).toBe(3);
    expect(of('oncely.retry.sleep').map(([delay]) => delay)).toEqual([50]);
    expect(of('oncely.retry.outcomes')).toEqual([
      [1, { 'oncely.outcome': 'unknown', 'oncely.stopped_by': 'budget' }],
      [1, { 'oncely.outcome': 'unknown', 'oncely.stopped_by': 'budget' }],
    ]);
  });

  it('Retry-After: the sleep records the server\'s delay and says Retry-After set it', async () => {
    const { clock, policy, of } = setup({ deadlineMs: 60_000, attemptTimeoutMs: 10_000 });
    const { fn } = scripted(clock, [status(503), status(429, { 'retry-after': '7' }), status(200)]);
    const outcome = await drive(clock, retry(fn, policy), 500);
    expect(outcome.outcome).toBe('succeeded');
    // The jitter of the second sleep (100 ms) is below the 7 s asked for, so the server's value wins.
    expect(of('oncely.retry.sleep')).toEqual([
      [50, { 'oncely.reason': 'unavailable', 'oncely.retry_after': false }],
      [7_000, { 'oncely.reason': 'throttled', 'oncely.retry_after': true }],
    ]);
    expect(of('oncely.retry.duration')).toEqual([[7_050, { 'oncely.outcome': 'succeeded' }]]);
  });

  it('breaker: transitions from the breaker, rejections from retry, with one listener on both', async () => {
    const clock = manualClock(0);
    const recording = recordingMeter();
    const onEvent = otelRetryMetrics(recording.meter, { operation: 'payments.charge' });
    const breaker = circuitBreaker({ mode: { kind: 'consecutive', failures: 2 }, halfOpenAfterMs: 1_000, clock, onEvent });
    const policy = retryPolicy<Response>({ random: () => 0.5, clock, breaker, maxAttempts: 2, onEvent });
    const op = { 'oncely.operation': 'payments.charge' };

    const opened = await drive(clock, retry(scripted(clock, [status(503)]).fn, policy, { key: 'k-open' }), 10);
    expect(opened).toMatchObject({ outcome: 'unknown', stoppedBy: 'attempts' });
    const rejectedCall = scripted(clock, [status(200)]);
    const rejected = await drive(clock, retry(rejectedCall.fn, policy, { key: 'k-rejected' }), 10);
    expect(rejected).toMatchObject({ outcome: 'failed', attempts: 0, stoppedBy: 'breaker' });
    expect(rejectedCall.calls()).toBe(0);
    await clock.advance(1_000);
    const probe = await drive(clock, retry(scripted(clock, [status(200)]).fn, policy, { key: 'k-probe' }), 10);
    expect(probe.outcome).toBe('succeeded');

    expect(recording.of('oncely.retry.breaker.transitions')).toEqual([
      [1, { ...op, 'oncely.from': 'closed', 'oncely.to': 'open' }],
      [1, { ...op, 'oncely.from': 'open', 'oncely.to': 'half_open' }],
      [1, { ...op, 'oncely.from': 'half_open', 'oncely.to': 'closed' }],
    ]);
    expect(recording.of('oncely.retry.breaker.rejected')).toEqual([[1, { ...op, 'oncely.state': 'open' }]]);
    expect(recording.of('oncely.retry.outcomes')).toEqual([
      [1, { ...op, 'oncely.outcome': 'unknown', 'oncely.stopped_by': 'attempts' }],
      [1, { ...op, 'oncely.outcome': 'failed', 'oncely.stopped_by': 'breaker' }],
      [1, { ...op, 'oncely.outcome': 'succeeded', 'oncely.stopped_by': 'answer' }],
    ]);
    expect(recording.total('oncely.retry.attempts')).toBe(3);
  });

  it('puts the operation on every record when given, nothing per request, and never the key', async () => {
    const key = 'k_secret_7f3a';
    const labelled = setup({ maxAttempts: 2 }, { operation: 'payments.charge' });
    await drive(labelled.clock, retry(scripted(labelled.clock, [reset(), status(201)]).fn, labelled.policy, { key }), 10);
    expect(labelled.records.length).toBe(7);
    for (const record of labelled.records) expect(record.attributes['oncely.operation']).toBe('payments.charge');
    expect(JSON.stringify(labelled.records)).not.toContain(key);

    const plain = setup({ maxAttempts: 2 });
    await drive(plain.clock, retry(scripted(plain.clock, [reset(), status(201)]).fn, plain.policy, { key }), 10);
    const allowed = new Set(['oncely.verdict', 'oncely.reason', 'oncely.effect', 'oncely.retry_after', 'oncely.outcome', 'oncely.stopped_by']);
    expect(plain.records.length).toBe(7);
    for (const record of plain.records) for (const name of Object.keys(record.attributes)) expect(allowed).toContain(name);
    expect(JSON.stringify(plain.records)).not.toContain(key);
  });

  it('a meter that throws changes nothing in the retry outcome', async () => {
    const clock = manualClock(0);
    const broken: MeterLike = {
      createCounter: () => ({
        add: () => {
          throw new Error('exporter down');
        },
      }),
      createHistogram: () => ({
        record: () => {
          throw new Error('exporter down');
        },
      }),
    };
    const policy = retryPolicy<Response>({ random: () => 0.5, clock, maxAttempts: 3, onEvent: otelRetryMetrics(broken) });
    const { fn, calls } = scripted(clock, [status(503), status(200)]);
    const outcome = await drive(clock, retry(fn, policy), 10);
    expect(outcome).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    expect(calls()).toBe(2);
  });

  it('works with the OpenTelemetry SDK meter', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
    const provider = new MeterProvider({ readers: [reader] });
    const clock = manualClock(0);
    const policy = retryPolicy<Response>({ random: () => 0.5, clock, onEvent: otelRetryMetrics(provider.getMeter('oncely')) });
    await drive(clock, retry(scripted(clock, [status(503), status(200)]).fn, policy), 10);
    await reader.forceFlush();
    const metrics = exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
    await provider.shutdown();
    const points = (name: string) => metrics.find((metric) => metric.descriptor.name === name)?.dataPoints ?? [];
    const byVerdict = Object.fromEntries(points('oncely.retry.attempts').map((p) => [String(p.attributes['oncely.verdict']), p.value]));
    expect(byVerdict).toEqual({ retry: 1, success: 1 });
    expect(points('oncely.retry.outcomes').map((p) => [p.attributes['oncely.outcome'], p.value])).toEqual([['succeeded', 1]]);
    expect((points('oncely.retry.sleep')[0]!.value as { sum: number }).sum).toBe(50);
  });
});

/** One scripted answer per attempt, covering each verdict the default classifier gives. */
const answer = fc.constantFrom<'ok' | 'invalid' | 'server_error' | 'unavailable' | 'throttled' | 'reset' | 'refused'>(
  'ok',
  'invalid',
  'server_error',
  'unavailable',
  'throttled',
  'reset',
  'refused',
);
const toAnswer = (kind: string): Response | Error => {
  switch (kind) {
    case 'ok':
      return status(200);
    case 'invalid':
      return status(422);
    case 'server_error':
      return status(500);
    case 'unavailable':
      return status(503);
    case 'throttled':
      return status(429, { 'retry-after': '1' });
    case 'reset':
      return reset();
    default:
      return new TypeError('fetch failed', { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) });
  }
};

describe('otelRetryMetrics: property', () => {
  it('the attempts counter totals the outcome event\'s attempts, and each run records exactly one outcome', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(answer, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 6 }),
        fc.boolean(),
        async (script, maxAttempts, withBudget) => {
          const clock = manualClock(0);
          const recording = recordingMeter();
          const metrics = otelRetryMetrics(recording.meter);
          const events: RetryEvent[] = [];
          const policy = retryPolicy<Response>({
            random: () => 0.5,
            clock,
            maxAttempts,
            baseMs: 10,
            capMs: 100,
            deadlineMs: 60_000,
            attemptTimeoutMs: 5_000,
            budget: withBudget ? retryBudget({ ratio: 0.5, minRetriesPerSec: 0, clock }) : undefined,
            onEvent: (event) => {
              events.push(event);
              metrics(event);
            },
          });
          const { fn, calls } = scripted(clock, script.map(toAnswer));
          const outcome = await drive(clock, retry(fn, policy), 50);
          const ends = events.filter((event) => event.type === 'outcome');
          expect(ends.length).toBe(1);
          expect(recording.of('oncely.retry.outcomes').length).toBe(1);
          expect(recording.total('oncely.retry.outcomes')).toBe(1);
          expect(recording.total('oncely.retry.attempts')).toBe(ends[0]!.type === 'outcome' ? ends[0]!.attempts : Number.NaN);
          expect(recording.total('oncely.retry.attempts')).toBe(outcome.attempts);
          expect(recording.total('oncely.retry.attempts')).toBe(calls());
          expect(recording.of('oncely.retry.duration').length).toBe(1);
        },
      ),
      { numRuns: 150 },
    );
  });
});
