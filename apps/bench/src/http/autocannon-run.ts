import autocannon from 'autocannon';
import type { RunMeasurement } from '../harness/closed-loop.js';

/** Options of {@link postWithKeys}. */
export interface KeyedLoadOptions {
  readonly url: string;
  readonly connections: number;
  readonly durationSec: number;
  /** Unique per run, so no run replays another run's keys. */
  readonly keyPrefix: string;
  /** Every `duplicateEvery`-th request repeats the key sent `duplicateLag` requests earlier. */
  readonly duplicateEvery: number;
  readonly duplicateLag: number;
}

/** A run's throughput and latency, plus the answers that were not 2xx. */
export interface KeyedLoadResult extends RunMeasurement {
  readonly non2xx: number;
  readonly errors: number;
}

/** The key of request `i`: fresh, or (every `every`-th request) the key of a request `lag` earlier. */
export function keyFor(i: number, options: Pick<KeyedLoadOptions, 'keyPrefix' | 'duplicateEvery' | 'duplicateLag'>): string {
  const { keyPrefix, duplicateEvery, duplicateLag } = options;
  const duplicate = i % duplicateEvery === duplicateEvery - 1 && i >= duplicateLag;
  return `${keyPrefix}-${duplicate ? i - duplicateLag : i}`;
}

/** POSTs a payment with an `Idempotency-Key` per request through autocannon. */
export async function postWithKeys(options: KeyedLoadOptions): Promise<KeyedLoadResult> {
  let sent = 0;
  const started = performance.now();
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSec,
    // Sampling every 100 ms lets a run last a fraction of a second (the default 1 s ticker rounds up).
    sampleInt: 100,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-tenant': 'bench' },
        body: JSON.stringify({ amount: 1000, currency: 'EUR' }),
        setupRequest: (request) => ({
          ...request,
          headers: { ...request.headers, 'idempotency-key': `"${keyFor(sent++, options)}"` },
        }),
      },
    ],
  });
  const elapsedMs = performance.now() - started;
  const ops = result['2xx'] + result.non2xx;
  return {
    ops,
    elapsedMs,
    opsPerSec: (ops * 1_000) / elapsedMs,
    latency: { p50: result.latency.p50, p99: result.latency.p99, count: ops },
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}
