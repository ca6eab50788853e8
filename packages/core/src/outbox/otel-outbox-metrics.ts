import type { InboxEvent } from '../inbox/inbox.js';
import type { MeterLike } from '../observability/otel-metrics.js';
import type { RelayEvent } from './relay-events.js';

/** Attribute values as OpenTelemetry accepts them. */
type Attributes = Record<string, string | number | boolean>;

/** A `Meter` with synchronous gauges (`@opentelemetry/api` ≥ 1.9): pass `metrics.getMeter('oncely')`. */
export interface GaugeMeterLike extends MeterLike {
  createGauge(name: string, options?: { description?: string; unit?: string }): {
    record(value: number, attributes?: Attributes): void;
  };
}

/** An event a consumer reports, as far as these metrics go: stream consumers and inboxes both. */
type DuplicateEvent = InboxEvent | { readonly type: 'stream_duplicate'; readonly group: string };

/**
 * Turns relay and inbox events into OpenTelemetry metrics; use as the `onEvent` of `createRelay` and
 * of an inbox (or a stream consumer). Event ids never become attributes: only aggregate and event
 * types, stages and consumer names, which are bounded.
 *
 * Gauges: `oncely.outbox.unpublished`, `oncely.outbox.oldest_unpublished_age` (ms),
 * `oncely.outbox.dead_lettered`. Counters: `oncely.outbox.published`, `oncely.outbox.publish_failures`,
 * `oncely.outbox.dead_letters`, `oncely.outbox.lease_lost`, `oncely.outbox.purged`,
 * `oncely.outbox.relay_errors`, `oncely.inbox.duplicates` (by `oncely.consumer`). Histograms:
 * `oncely.outbox.publish_lag` (ms) and `oncely.outbox.attempts` (attempt that succeeded).
 */
export function otelOutboxMetrics(meter: GaugeMeterLike): (event: RelayEvent | DuplicateEvent) => void {
  const unpublished = meter.createGauge('oncely.outbox.unpublished', { description: 'Events not yet published' });
  const oldest = meter.createGauge('oncely.outbox.oldest_unpublished_age', { description: 'Age of the oldest unpublished event', unit: 'ms' });
  const parked = meter.createGauge('oncely.outbox.dead_lettered', { description: 'Dead-lettered events waiting for an operator' });
  const published = meter.createCounter('oncely.outbox.published', { description: 'Events acknowledged by the broker and marked' });
  const failures = meter.createCounter('oncely.outbox.publish_failures', { description: 'Failed publish attempts, retried with backoff' });
  const deadLetters = meter.createCounter('oncely.outbox.dead_letters', { description: 'Events dead-lettered' });
  const leaseLost = meter.createCounter('oncely.outbox.lease_lost', { description: 'Events taken over from a slow relay' });
  const purged = meter.createCounter('oncely.outbox.purged', { description: 'Published events deleted' });
  const errors = meter.createCounter('oncely.outbox.relay_errors', { description: 'Storage or wake-up failures of relays' });
  const duplicates = meter.createCounter('oncely.inbox.duplicates', { description: 'Redeliveries recognised by an inbox' });
  const lag = meter.createHistogram('oncely.outbox.publish_lag', { description: 'From enqueue to marked published', unit: 'ms' });
  const attempts = meter.createHistogram('oncely.outbox.attempts', { description: 'Attempt on which an event was published' });

  return (event) => {
    switch (event.type) {
      case 'outbox_stats':
        unpublished.record(event.unpublished);
        oldest.record(event.oldestUnpublishedAgeMs);
        parked.record(event.deadLettered);
        return;
      case 'outbox_published': {
        const attributes = { 'oncely.aggregate_type': event.aggregateType, 'oncely.event_type': event.eventType };
        published.add(1, attributes);
        lag.record(event.lagMs, attributes);
        attempts.record(event.attempt, attributes);
        return;
      }
      case 'outbox_publish_failed':
        failures.add(1, { 'oncely.aggregate_type': event.aggregateType, 'oncely.event_type': event.eventType });
        return;
      case 'outbox_dead_lettered':
        deadLetters.add(1, { 'oncely.aggregate_type': event.aggregateType, 'oncely.event_type': event.eventType });
        return;
      case 'outbox_lease_lost':
        leaseLost.add(event.count, { 'oncely.stage': event.stage });
        return;
      case 'outbox_purged':
        purged.add(event.count);
        return;
      case 'relay_error':
        errors.add(1, { 'oncely.stage': event.stage });
        return;
      case 'inbox_duplicate':
        duplicates.add(1, { 'oncely.consumer': event.consumer });
        return;
      case 'stream_duplicate':
        duplicates.add(1, { 'oncely.consumer': event.group });
        return;
    }
  };
}
