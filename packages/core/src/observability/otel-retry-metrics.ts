import type { RetryEvent } from '../retry/events.js';
import type { MeterLike } from './otel-metrics.js';

/** Attribute values as OpenTelemetry accepts them. */
type Attributes = Record<string, string | number | boolean>;

/** Options of {@link otelRetryMetrics}. */
export interface OtelRetryMetricsOptions {
  /**
   * Adds `oncely.operation` with this value to every attribute set: a fixed name you choose for the
   * call site (`payments.charge`), never a key, an id or anything else per request.
   */
  readonly operation?: string;
}

/**
 * Turns `retry` and `circuitBreaker` events into OpenTelemetry metrics; use as the `onEvent` of a
 * retry policy and of a breaker (the same listener serves both). Events carry no key, and attributes
 * are small enums only: verdicts, reasons, effects, outcomes, stop reasons and breaker states.
 * Custom classifiers' reasons become `oncely.reason` values, so keep them a fixed set.
 *
 * Counters: `oncely.retry.attempts` (`oncely.verdict` = success, failure, retry, aborted; with
 * `oncely.reason` and `oncely.effect` for retries), `oncely.retry.outcomes` (`oncely.outcome` =
 * succeeded, failed, unknown; `oncely.stopped_by` = answer, attempts, deadline, budget, breaker,
 * aborted), `oncely.retry.budget_refused`, `oncely.retry.breaker.rejected` (`oncely.state`) and
 * `oncely.retry.breaker.transitions` (`oncely.from`, `oncely.to`). Histograms (ms):
 * `oncely.retry.attempt.duration` (`oncely.verdict`), `oncely.retry.sleep` (`oncely.reason`,
 * `oncely.retry_after` true when the server's `Retry-After` set the delay) and `oncely.retry.duration`
 * (whole calls, by `oncely.outcome`).
 */
export function otelRetryMetrics(meter: MeterLike, options: OtelRetryMetricsOptions = {}): (event: RetryEvent) => void {
  const attempts = meter.createCounter('oncely.retry.attempts', { description: 'Attempts by verdict' });
  const outcomes = meter.createCounter('oncely.retry.outcomes', { description: 'Retried calls by outcome and what stopped them' });
  const budgetRefused = meter.createCounter('oncely.retry.budget_refused', { description: 'Retries refused by the retry budget' });
  const breakerRejected = meter.createCounter('oncely.retry.breaker.rejected', { description: 'Attempts rejected by the circuit breaker' });
  const transitions = meter.createCounter('oncely.retry.breaker.transitions', { description: 'Circuit breaker state changes' });
  const attemptDuration = meter.createHistogram('oncely.retry.attempt.duration', { description: 'Attempt time', unit: 'ms' });
  const sleep = meter.createHistogram('oncely.retry.sleep', { description: 'Backoff before the next attempt', unit: 'ms' });
  const duration = meter.createHistogram('oncely.retry.duration', { description: 'Whole call, attempts and sleeps', unit: 'ms' });
  const base: Attributes = options.operation === undefined ? {} : { 'oncely.operation': options.operation };

  return (event) => {
    switch (event.type) {
      case 'attempt':
        // Counted when the attempt's result is known, with its verdict.
        return;
      case 'attempt_result': {
        const verdict: Attributes = { ...base, 'oncely.verdict': event.verdict };
        attemptDuration.record(event.durationMs, verdict);
        // A fresh object: a meter may keep the one it was given.
        const attributes: Attributes = { ...verdict };
        if (event.reason !== undefined) attributes['oncely.reason'] = event.reason;
        if (event.effect !== undefined) attributes['oncely.effect'] = event.effect;
        attempts.add(1, attributes);
        return;
      }
      case 'sleep':
        sleep.record(event.delayMs, { ...base, 'oncely.reason': event.reason, 'oncely.retry_after': event.retryAfterMs !== undefined });
        return;
      case 'budget_refused':
        budgetRefused.add(1, base);
        return;
      case 'breaker_rejected':
        breakerRejected.add(1, { ...base, 'oncely.state': event.state });
        return;
      case 'breaker_transition':
        transitions.add(1, { ...base, 'oncely.from': event.from, 'oncely.to': event.to });
        return;
      case 'outcome':
        outcomes.add(1, { ...base, 'oncely.outcome': event.outcome, 'oncely.stopped_by': event.stoppedBy });
        duration.record(event.durationMs, { ...base, 'oncely.outcome': event.outcome });
        return;
    }
  };
}
