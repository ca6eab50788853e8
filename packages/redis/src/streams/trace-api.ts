import { resolveTraceApi, type TraceOption } from '@oncely/core/adapter';

/** The trace API consumer spans start from; `@opentelemetry/api` is an optional peer. */
export const traceApi = (option: TraceOption) => resolveTraceApi(option, () => import('@opentelemetry/api'));
