import * as api from '@opentelemetry/api';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { captureTraceHeaders, type TraceApiLike, withConsumerSpan } from '../../src/otel.js';

describe('trace context', () => {
  it('the @opentelemetry/api module is a TraceApiLike as it is', () => {
    expectTypeOf(api).toMatchTypeOf<TraceApiLike>();
  });

  it('captures nothing without a propagator or a span, and runs the handler alone without an api', async () => {
    expect(captureTraceHeaders(api)).toBeUndefined();
    expect(captureTraceHeaders(undefined)).toBeUndefined();
    await expect(withConsumerSpan(undefined, { name: 'x', headers: undefined, attributes: {} }, async () => 7)).resolves.toBe(7);
  });
});
