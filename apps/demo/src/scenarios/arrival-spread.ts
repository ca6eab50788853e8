/**
 * The most arrivals inside any window of `windowMs` (half-open, `[t, t + windowMs)`): how hard the
 * busiest moment hit the dependency.
 */
export function peakArrivals(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let peak = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    peak = Math.max(peak, end - start + 1);
  }
  return peak;
}
