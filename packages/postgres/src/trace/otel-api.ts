import { resolveTraceApi, type TraceOption } from '@oncely/core/adapter';

/** The trace API `enqueue` captures from; `@opentelemetry/api` is an optional peer. */
export const traceApi = (option: TraceOption) => resolveTraceApi(option, () => import('@opentelemetry/api'));
