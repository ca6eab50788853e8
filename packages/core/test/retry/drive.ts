import type { ManualClock } from '../../src/index.js';

/** Moves a manual clock forward until `promise` settles; sleepers still wake at their exact times. */
export async function drive<T>(clock: ManualClock, promise: Promise<T>, stepMs = 1_000, maxSteps = 10_000): Promise<T> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await clock.advance(0);
  for (let step = 0; !settled && step < maxSteps; step++) await clock.advance(stepMs);
  return promise;
}
