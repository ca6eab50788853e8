import { OncelyError } from './errors.js';

/** Time as oncely sees it; inject a manual clock to test without sleeping. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `callback` after `ms` unless the returned cancel function runs first. Optional: without it
   * oncely schedules through `sleep`. A timer that must not keep a process alive (lease watchdogs).
   */
  schedule?(ms: number, callback: () => void): () => void;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new OncelyError('aborted', 'oncely: aborted');
}

/** The real clock: `Date.now()` and timers that do not keep the process alive. */
/** Timers fire at once past this delay (a 32-bit signed millisecond count), so longer sleeps are chained. */
const MAX_TIMER_MS = 2_147_483_647;

export const systemClock: Clock = {
  now: () => Date.now(),
  schedule(ms, callback) {
    let timer: ReturnType<typeof setTimeout>;
    const wait = (remaining: number) => {
      timer = setTimeout(
        () => (remaining > MAX_TIMER_MS ? wait(remaining - MAX_TIMER_MS) : callback()),
        Math.min(Math.max(0, remaining), MAX_TIMER_MS),
      );
      (timer as { unref?: () => void }).unref?.();
    };
    wait(ms);
    return () => clearTimeout(timer);
  },
  sleep(ms, signal) {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      let timer: ReturnType<typeof setTimeout>;
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortReason(signal!));
      };
      const wait = (remaining: number) => {
        timer = setTimeout(() => {
          if (remaining > MAX_TIMER_MS) return wait(remaining - MAX_TIMER_MS);
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }, Math.min(Math.max(0, remaining), MAX_TIMER_MS));
      };
      wait(ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};

/** A clock that moves only when told to; sleepers wake in deadline order as time passes them. */
export interface ManualClock extends Required<Clock> {
  /** Moves time forward, waking every sleeper whose deadline has passed. */
  advance(ms: number): Promise<void>;
  /** Sets the time (forwards only). */
  set(now: number): Promise<void>;
  /** How many sleepers are waiting. */
  readonly pending: number;
}

/** Creates a {@link ManualClock} starting at `start` (default 0). */
export function manualClock(start = 0): ManualClock {
  let now = start;
  let sequence = 0;
  const sleepers = new Set<{ at: number; order: number; wake: () => void }>();
  const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
  const clock: ManualClock = {
    now: () => now,
    get pending() {
      return sleepers.size;
    },
    sleep(ms, signal) {
      return new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(abortReason(signal));
        const sleeper = {
          at: now + Math.max(0, ms),
          order: sequence++,
          wake: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = () => {
          sleepers.delete(sleeper);
          reject(abortReason(signal!));
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        sleepers.add(sleeper);
      });
    },
    schedule(ms, callback) {
      const sleeper = { at: now + Math.max(0, ms), order: sequence++, wake: callback };
      sleepers.add(sleeper);
      return () => sleepers.delete(sleeper);
    },
    async advance(ms) {
      await clock.set(now + ms);
    },
    async set(target) {
      // Wake sleepers one deadline at a time so work scheduled by a waking sleeper is seen too.
      for (;;) {
        const due = [...sleepers]
          .filter((sleeper) => sleeper.at <= target)
          .sort((a, b) => a.at - b.at || a.order - b.order)[0];
        if (!due) break;
        sleepers.delete(due);
        now = Math.max(now, due.at);
        due.wake();
        await settle();
      }
      now = Math.max(now, target);
      await settle();
    },
  };
  return clock;
}
