/** Attribute values as OpenTelemetry accepts them. */
type Attributes = Record<string, string | number | boolean>;

/** The slice of a `Context` these functions pass around. */
export interface ContextLike {
  getValue(key: symbol): unknown;
}

/** The slice of a `SpanContext` a link carries. */
export interface SpanContextLike {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
}

/** The slice of a `Span` a consumer span uses. */
export interface SpanLike {
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): unknown;
  end(): void;
}

/**
 * The slice of the `@opentelemetry/api` module that trace propagation uses, typed structurally so
 * `@oncely/core` keeps zero dependencies: pass `import * as api from '@opentelemetry/api'`.
 */
export interface TraceApiLike {
  readonly ROOT_CONTEXT: ContextLike;
  readonly context: { active(): ContextLike; with<R>(context: ContextLike, fn: () => R): R };
  readonly propagation: {
    inject(context: ContextLike, carrier: Record<string, string>): void;
    extract(context: ContextLike, carrier: Record<string, string>): ContextLike;
  };
  readonly trace: {
    getSpanContext(context: ContextLike): SpanContextLike | undefined;
    setSpan(context: ContextLike, span: SpanLike): ContextLike;
    getTracer(name: string): {
      startSpan(name: string, options: { kind: number; links: { context: SpanContextLike }[]; attributes: Attributes }): SpanLike;
    };
  };
}

/** The W3C trace context headers an outbox captures and a publisher carries. */
const TRACE_HEADERS = ['traceparent', 'tracestate'] as const;
/** `SpanKind.CONSUMER` and `SpanStatusCode.ERROR` of `@opentelemetry/api`. */
const CONSUMER = 4;
const ERROR = 2;

/**
 * The active trace context as W3C headers (`traceparent`, and `tracestate` when set), through the
 * registered propagator; `undefined` without a sampled or remote span, or without `api`.
 */
export function captureTraceHeaders(api: TraceApiLike | undefined): Record<string, string> | undefined {
  if (!api) return undefined;
  const carrier: Record<string, string> = {};
  api.propagation.inject(api.context.active(), carrier);
  const picked = TRACE_HEADERS.filter((name) => typeof carrier[name] === 'string' && carrier[name] !== '');
  return picked.length === 0 ? undefined : Object.fromEntries(picked.map((name) => [name, carrier[name]!]));
}

/**
 * Runs `fn` (a consumer applying one event) in a `CONSUMER` span linked to the producer's trace
 * context in `headers`, so a trace shows where the event came from; the span records a throw and ends
 * when `fn` settles. Without `api`, or for an event that carries no `traceparent`, runs `fn` alone:
 * there is nothing to link, and the consumer's hot path stays as it was.
 */
export async function withConsumerSpan<T>(
  api: TraceApiLike | undefined,
  span: { readonly name: string; readonly headers: Readonly<Record<string, string>> | undefined; readonly attributes: Attributes },
  fn: () => Promise<T>,
): Promise<T> {
  if (!api || span.headers?.traceparent === undefined) return fn();
  const producer = api.trace.getSpanContext(api.propagation.extract(api.ROOT_CONTEXT, { ...span.headers }));
  const started = api.trace
    .getTracer('oncely')
    .startSpan(span.name, { kind: CONSUMER, links: producer ? [{ context: producer }] : [], attributes: span.attributes });
  try {
    return await api.context.with(api.trace.setSpan(api.context.active(), started), fn);
  } catch (error) {
    started.recordException(error instanceof Error ? error : String(error));
    started.setStatus({ code: ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    started.end();
  }
}

/** Where an adapter takes trace context from: `@opentelemetry/api` if installed (`undefined`), a given copy of it, or `false` for none. */
export type TraceOption = TraceApiLike | false | undefined;

let installed: Promise<TraceApiLike | undefined> | undefined;

/**
 * The trace API an adapter uses for `option`. `load` imports the adapter's optional peer
 * (`() => import('@opentelemetry/api')`) once per process, on first use; a failed import means none.
 */
export function resolveTraceApi(option: TraceOption, load: () => Promise<unknown>): Promise<TraceApiLike | undefined> | TraceApiLike | undefined {
  if (option === false) return undefined;
  if (option) return option;
  installed ??= load().then(
    (api) => api as TraceApiLike,
    () => undefined,
  );
  return installed;
}
