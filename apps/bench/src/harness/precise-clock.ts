/**
 * Epoch milliseconds with a fraction: `Date.now()` rounds to the millisecond, which turns stages of a
 * few hundred µs into 0 or 1 ms. Anchored on the wall clock at process start, like `Date.now()`.
 */
export const preciseNow = (): number => performance.timeOrigin + performance.now();
