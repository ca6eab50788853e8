/** How many recent executions of an operation the estimate looks at. */
const WINDOW = 32;
/** The share of recent executions that had finished by the advertised time. */
const QUANTILE = 0.9;

/** The last {@link WINDOW} durations of one operation, in a ring. */
class RecentDurations {
  readonly #samples = new Float64Array(WINDOW);
  #count = 0;

  record(ms: number): void {
    this.#samples[this.#count % WINDOW] = ms;
    this.#count++;
  }

  /** The {@link QUANTILE} of the recorded durations (nearest rank), or undefined before the first. */
  quantile(): number | undefined {
    const size = Math.min(this.#count, WINDOW);
    if (size === 0) return undefined;
    const sorted = this.#samples.slice(0, size).sort();
    return sorted[Math.max(0, Math.ceil(QUANTILE * size) - 1)]!;
  }
}

/**
 * When a duplicate should come back: the operation's observed durations (the time 9 in 10 recent
 * executions took, in this process), never more than what is left of the first attempt's lease,
 * and at least one second. Before any execution has been observed it answers one second: polling
 * soon beats waiting out a 30-second lease for an operation that takes one.
 */
export class RetryAfterEstimate {
  readonly #byOperation = new Map<string, RecentDurations>();

  /** Records how long one execution of `operation` took, from claim to captured response. */
  record(operation: string, ms: number): void {
    let durations = this.#byOperation.get(operation);
    if (!durations) {
      durations = new RecentDurations();
      this.#byOperation.set(operation, durations);
    }
    durations.record(ms);
  }

  /** Whole seconds for `Retry-After` on a 409, given how long the current lease still runs. */
  seconds(operation: string, leaseRemainingMs: number): number {
    const expected = this.#byOperation.get(operation)?.quantile() ?? 0;
    return retryAfterSeconds(expected, leaseRemainingMs);
  }
}

/** `expectedMs` in whole seconds, at least 1 and at most the lease left (rounded up, so a lapse is covered). */
export function retryAfterSeconds(expectedMs: number, leaseRemainingMs: number): number {
  const cap = Math.max(1, Math.ceil(leaseRemainingMs / 1000));
  return Math.min(cap, Math.max(1, Math.ceil(expectedMs / 1000)));
}
