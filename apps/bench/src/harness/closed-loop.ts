import { type LatencySummary, latencyRecorder } from './latency-recorder.js';

/** One timed run of a workload. */
export interface RunMeasurement {
  readonly ops: number;
  readonly elapsedMs: number;
  readonly opsPerSec: number;
  readonly latency: LatencySummary;
}

/** Options of {@link closedLoop}. */
export interface ClosedLoopOptions {
  /** Workers issuing operations back to back: each starts its next operation when the last ends. */
  readonly concurrency: number;
  /** Workers stop starting operations after this long. */
  readonly durationMs: number;
  /** One operation; `index` is unique within the run, so it can name a fresh key. */
  readonly operation: (index: number) => Promise<unknown>;
}

/**
 * Runs `operation` from `concurrency` workers for `durationMs` and reports throughput and latency.
 * An operation that throws aborts the run: a benchmark never counts failures as work.
 */
export async function closedLoop(options: ClosedLoopOptions): Promise<RunMeasurement> {
  const { concurrency, durationMs, operation } = options;
  const recorder = latencyRecorder();
  let next = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  const worker = async () => {
    while (performance.now() < deadline) {
      const index = next++;
      const begin = performance.now();
      await operation(index);
      recorder.record(performance.now() - begin);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedMs = performance.now() - started;
  return { ops: next, elapsedMs, opsPerSec: (next * 1000) / elapsedMs, latency: recorder.summary() };
}
