import { quantileSorted } from './stats.js';

/** Latency percentiles of one measured run, in milliseconds. */
export interface LatencySummary {
  readonly p50: number;
  readonly p99: number;
  readonly count: number;
}

/** Collects per-operation latencies without allocating per sample. */
export interface LatencyRecorder {
  /** Adds one latency in milliseconds. */
  record(ms: number): void;
  /** Percentiles over everything recorded so far. */
  summary(): LatencySummary;
}

/** Creates a {@link LatencyRecorder} that grows its buffer by doubling. */
export function latencyRecorder(initialCapacity = 16_384): LatencyRecorder {
  let samples = new Float64Array(initialCapacity);
  let count = 0;
  return {
    record(ms) {
      if (count === samples.length) {
        const bigger = new Float64Array(samples.length * 2);
        bigger.set(samples);
        samples = bigger;
      }
      samples[count++] = ms;
    },
    summary() {
      if (count === 0) return { p50: Number.NaN, p99: Number.NaN, count: 0 };
      const sorted = samples.slice(0, count).sort();
      return { p50: quantileSorted(sorted, 0.5), p99: quantileSorted(sorted, 0.99), count };
    },
  };
}
