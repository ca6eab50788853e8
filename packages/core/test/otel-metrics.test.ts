import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { createIdempotency, memoryStore } from '../src/index.js';
import { otelMetrics } from '../src/otel.js';

async function collect(run: (onEvent: ReturnType<typeof otelMetrics>) => Promise<void>) {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
  const provider = new MeterProvider({ readers: [reader] });
  await run(otelMetrics(provider.getMeter('oncely')));
  await reader.forceFlush();
  const metrics = exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
  await provider.shutdown();
  return metrics;
}

describe('OpenTelemetry metrics', () => {
  it('counts first executions, replays and mismatches by operation, with no key in any attribute', async () => {
    const key = 'k_secret_123';
    const metrics = await collect(async (onEvent) => {
      const engine = createIdempotency({ store: memoryStore(), onEvent });
      const base = { tenant: 'acme', operation: 'payments.create.v1', key, request: { amount: 1 } };
      await engine.run(base, async () => ({ status: 201 }));
      await engine.run(base, async () => ({ status: 201 }));
      await engine.run(base, async () => ({ status: 201 }));
      await engine.run({ ...base, request: { amount: 2 } }, async () => ({ status: 201 }));
    });
    const requests = metrics.find((m) => m.descriptor.name === 'oncely.idempotency.requests');
    const byResult = Object.fromEntries(requests!.dataPoints.map((p) => [String(p.attributes['oncely.result']), p.value]));
    expect(byResult).toEqual({ claimed: 1, replayed: 2, mismatch: 1 });
    const outcomes = metrics.find((m) => m.descriptor.name === 'oncely.idempotency.outcomes');
    expect(outcomes!.dataPoints.map((p) => [p.attributes['oncely.state'], p.value])).toEqual([['succeeded', 1]]);
    expect(JSON.stringify(metrics)).not.toContain(key);
    for (const metric of metrics) {
      for (const point of metric.dataPoints) expect(Object.keys(point.attributes)).not.toContain('oncely.tenant');
    }
  });
});
