import type { EngineEvent } from '../events.js';

/** Attribute values as OpenTelemetry accepts them. */
type Attributes = Record<string, string | number | boolean>;

/**
 * The slice of an OpenTelemetry `Meter` (`@opentelemetry/api`) this binding uses, typed structurally so
 * `@oncely/core` keeps zero dependencies: pass `metrics.getMeter('oncely')`.
 */
export interface MeterLike {
  createCounter(name: string, options?: { description?: string; unit?: string }): {
    add(value: number, attributes?: Attributes): void;
  };
  createHistogram(name: string, options?: { description?: string; unit?: string }): {
    record(value: number, attributes?: Attributes): void;
  };
}

/** Options of {@link otelMetrics}. */
export interface OtelMetricsOptions {
  /** Adds `oncely.tenant` to every attribute set. Off by default: tenants can be unbounded. */
  readonly tenantAttribute?: boolean;
}

/**
 * Turns engine events into OpenTelemetry metrics; use as `onEvent`. Keys and key hashes never
 * become attributes: only the operation name, outcome states and stages do.
 *
 * Instruments: `oncely.idempotency.requests` (counter; `oncely.result` = claimed, replayed,
 * mismatch, in_progress), `oncely.idempotency.lease_takeovers`, `oncely.idempotency.outcomes`
 * (`oncely.state` = succeeded, failed_final, released), `oncely.idempotency.fence_lost`,
 * `oncely.idempotency.storage_errors`, `oncely.idempotency.responses_not_stored`,
 * `oncely.idempotency.purged` and the histogram `oncely.idempotency.duration` (ms, first executions).
 */
export function otelMetrics(meter: MeterLike, options: OtelMetricsOptions = {}): (event: EngineEvent) => void {
  const requests = meter.createCounter('oncely.idempotency.requests', { description: 'Idempotent requests by result' });
  const takeovers = meter.createCounter('oncely.idempotency.lease_takeovers', { description: 'Lapsed leases taken over' });
  const outcomes = meter.createCounter('oncely.idempotency.outcomes', { description: 'First executions by recorded state' });
  const fenceLost = meter.createCounter('oncely.idempotency.fence_lost', { description: 'Stale owners refused by fencing' });
  const storageErrors = meter.createCounter('oncely.idempotency.storage_errors', { description: 'Store failures (failed closed)' });
  const notStored = meter.createCounter('oncely.idempotency.responses_not_stored', { description: 'Responses over the size limit' });
  const purged = meter.createCounter('oncely.idempotency.purged', { description: 'Expired records deleted' });
  const duration = meter.createHistogram('oncely.idempotency.duration', { description: 'First execution time', unit: 'ms' });

  return (event) => {
    if (event.type === 'purged') {
      purged.add(event.count);
      return;
    }
    const attributes: Attributes = { 'oncely.operation': event.operation };
    if (options.tenantAttribute) attributes['oncely.tenant'] = event.tenant;
    switch (event.type) {
      case 'claimed':
        requests.add(1, { ...attributes, 'oncely.result': 'claimed', 'oncely.mode': event.mode });
        if (event.takeover) takeovers.add(1, attributes);
        return;
      case 'replayed':
        requests.add(1, { ...attributes, 'oncely.result': 'replayed', 'oncely.state': event.state });
        return;
      case 'mismatch':
      case 'in_progress':
        requests.add(1, { ...attributes, 'oncely.result': event.type });
        return;
      case 'completed':
        outcomes.add(1, { ...attributes, 'oncely.state': event.state });
        duration.record(event.durationMs, { ...attributes, 'oncely.state': event.state });
        return;
      case 'released':
        outcomes.add(1, { ...attributes, 'oncely.state': 'released', 'oncely.reason': event.reason });
        return;
      case 'fence_lost':
        fenceLost.add(1, { ...attributes, 'oncely.stage': event.stage });
        return;
      case 'storage_error':
        storageErrors.add(1, { ...attributes, 'oncely.stage': event.stage });
        return;
      case 'response_not_stored':
        notStored.add(1, { ...attributes, 'oncely.strategy': event.strategy });
        return;
    }
  };
}
