// `@oncely/core/otel`: OpenTelemetry metrics from engine, retry, relay and inbox events, through a structural meter.
export { type MeterLike, type OtelMetricsOptions, otelMetrics } from './observability/otel-metrics.js';
export { type OtelRetryMetricsOptions, otelRetryMetrics } from './observability/otel-retry-metrics.js';
export { type GaugeMeterLike, otelOutboxMetrics } from './outbox/otel-outbox-metrics.js';
export { captureTraceHeaders, type ContextLike, type SpanContextLike, type SpanLike, type TraceApiLike, type TraceOption, withConsumerSpan } from './observability/trace-context.js';
