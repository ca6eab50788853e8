import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { manualClock } from '@oncely/core';
import { otelOutboxMetrics } from '@oncely/core/otel';
import { createRelay } from '@oncely/core/outbox';
import { memoryBroker } from '../../src/index.js';
import { memoryOutbox } from '../../src/index.js';

async function collect(run: (onEvent: ReturnType<typeof otelOutboxMetrics>) => Promise<void>) {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
  const provider = new MeterProvider({ readers: [reader] });
  await run(otelOutboxMetrics(provider.getMeter('oncely')));
  await reader.forceFlush();
  const metrics = exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
  await provider.shutdown();
  return (name: string) => metrics.find((metric) => metric.descriptor.name === name)?.dataPoints ?? [];
}

describe('OpenTelemetry outbox metrics', () => {
  it('reports gauges, publishes by type with lag and attempts, dead letters and inbox duplicates, with no event id', async () => {
    const clock = manualClock(0);
    const outbox = memoryOutbox({ clock });
    const broker = memoryBroker();
    const events = ['a', 'b', 'c'].map((id) => outbox.add({ aggregateType: 'order', aggregateId: id, eventType: 'order.created.v1', payload: {} }));
    const points = await collect(async (onEvent) => {
      let refusals = 1;
      const relay = createRelay({
        source: outbox.source,
        publisher: broker.publisher((event) => (event.aggregateId === 'c' ? 'fail' : event.aggregateId === 'b' && refusals-- > 0 ? 'fail' : 'ack')),
        maxAttempts: 2,
        backoff: { baseMs: 10, capMs: 10 },
        statsIntervalMs: 1,
        pollIntervalMs: 50,
        purge: false,
        clock,
        onEvent,
      });
      await clock.advance(100);
      relay.start();
      await clock.advance(0);
      await clock.advance(200);
      await relay.stop();
      onEvent({ type: 'inbox_duplicate', at: 0, consumer: 'billing', eventId: events[0]!.eventId });
    });
    expect(points('oncely.outbox.published').map((p) => [p.attributes['oncely.event_type'], p.value])).toEqual([['order.created.v1', 2]]);
    expect(points('oncely.outbox.dead_letters').map((p) => p.value)).toEqual([1]);
    expect(points('oncely.outbox.publish_failures').map((p) => p.value)).toEqual([2]);
    const lag = points('oncely.outbox.publish_lag')[0]?.value as { count: number; min: number };
    expect([lag.count, lag.min]).toEqual([2, 100]);
    const attempts = points('oncely.outbox.attempts')[0]?.value as { sum: number };
    expect(attempts.sum).toBe(3);
    expect(points('oncely.outbox.dead_lettered').at(-1)?.value).toBe(1);
    expect(points('oncely.outbox.unpublished').at(-1)?.value).toBe(1);
    expect(points('oncely.inbox.duplicates').map((p) => [p.attributes['oncely.consumer'], p.value])).toEqual([['billing', 1]]);
    const everything = JSON.stringify(['published', 'publish_failures', 'dead_letters'].map((name) => points(`oncely.outbox.${name}`)));
    for (const event of events) expect(everything).not.toContain(event.eventId);
  });
});
