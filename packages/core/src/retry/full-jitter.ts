import { OncelyError } from '../errors.js';

/** Exponential backoff bounds: `baseMs * 2^attempt`, capped at `capMs`. */
export interface BackoffOptions {
  readonly baseMs: number;
  readonly capMs: number;
}

/**
 * Full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"):
 * `floor(random() * min(capMs, baseMs * 2^attempt))`, so it lies in `[0, min(cap, base·2^attempt))`.
 * `attempt` counts from 0; `random` is injectable for deterministic tests.
 */
export function fullJitter(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const { baseMs, capMs } = options;
  if (!Number.isInteger(attempt) || attempt < 0) {
    throw new OncelyError('invalid_option', `oncely: fullJitter attempt must be a non-negative integer, got ${attempt}`);
  }
  if (!(baseMs >= 0) || !(capMs >= baseMs) || !Number.isFinite(capMs)) {
    throw new OncelyError('invalid_option', `oncely: fullJitter needs 0 <= baseMs <= capMs, got ${baseMs} and ${capMs}`);
  }
  // 2^attempt overflows to Infinity past attempt 1023, and 0 * Infinity is NaN: a zero base never grows.
  const ceiling = baseMs === 0 ? 0 : Math.min(capMs, baseMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}
