import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import * as api from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { NatsConnection } from '@nats-io/nats-core';
import { createRelay } from '@oncely/core/outbox';
import { sqlDriver } from '@oncely/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, credit, ledger, until } from '@oncely/test-support';
import { natsConsumer, natsPublisher } from '../src/index.js';
import { connectNats, NATS_URL, natsUp, suiteTitle } from './support/nats-server.js';
import { createPipeline, type Pipeline } from './support/pipeline.js';

describe.skipIf(!natsUp)(suiteTitle('trace context from enqueue to the consumer span, over the PostgreSQL outbox and JetStream'), () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const pool = createPool();
  let nc: NatsConnection;
  let p: Pipeline;

  beforeAll(async () => {
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    api.trace.setGlobalTracerProvider(provider);
    nc = await connectNats();
    p = await createPipeline(pool, nc, NATS_URL, 'trace', 1);
  });
  afterAll(async () => {
    await p?.close();
    await nc?.close();
    await pool.end();
    api.trace.disable();
    api.propagation.disable();
    api.context.disable();
  });

  it('enqueue stores the active traceparent; the message carries it; the consumer span links to the producer span', async () => {
    const producer = api.trace.getTracer('test').startSpan('checkout');
    const enqueued = await api.context.with(api.trace.setSpan(api.context.active(), producer), () =>
      sqlDriver(pool).transaction(async (tx) => ({ action: 'commit', value: await p.outbox.enqueue(tx, credit('acct-1')) })),
    );
    producer.end();
    const { traceId, spanId } = producer.spanContext();
    expect(enqueued.headers?.traceparent).toBe(`00-${traceId}-${spanId}-01`);
    const { rows } = await pool.query(`SELECT headers->>'traceparent' AS traceparent FROM ${p.outbox.table}`);
    expect(rows[0].traceparent).toBe(enqueued.headers?.traceparent);

    const relay = createRelay({ source: p.outbox.source, publisher: natsPublisher({ connection: nc, subject: p.subject, buckets: 1 }), purge: false });
    expect((await relay.runOnce()).published).toBe(1);

    const { applied, handle } = ledger();
    let activeInHandler: string | undefined;
    const consumer = natsConsumer({
      connection: nc,
      stream: p.stream,
      durable: 'traced',
      filterSubject: `${p.subject}.0`,
      deadLetterSubject: `${p.subject}-dead`,
      handle: async (event) => {
        activeInHandler = api.trace.getSpan(api.context.active())?.spanContext().spanId;
        return handle(event);
      },
    });
    await consumer.start();
    await until('applied', () => applied.length === 1);
    await consumer.stop();
    expect(applied[0]?.headers?.traceparent).toBe(enqueued.headers?.traceparent);
    const span = exporter.getFinishedSpans().find((finished) => finished.name === 'traced process');
    expect(span?.kind).toBe(api.SpanKind.CONSUMER);
    expect(span?.links.map((link) => link.context.spanId)).toEqual([spanId]);
    expect(span?.links[0]?.context.traceId).toBe(traceId);
    expect(activeInHandler).toBe(span?.spanContext().spanId);
  });

  it('without an active span nothing is captured', async () => {
    const plain = await sqlDriver(pool).transaction(async (tx) => ({ action: 'commit', value: await p.outbox.enqueue(tx, credit('acct-2')) }));
    expect(plain.headers).toBeUndefined();
  });
});
