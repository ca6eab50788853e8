import type { Clock } from '../clock.js';
import { OncelyError } from '../errors.js';
import { type BackoffOptions, fullJitter } from '../retry/full-jitter.js';

/** Where a background loop is in its life: `idle` until `start()`, `stopped` for good after `stop()`. */
export type LoopStatus = 'idle' | 'running' | 'stopping' | 'stopped';

/** Options of {@link backgroundLoop}. */
export interface BackgroundLoopOptions {
  /** Names the loop in `invalid_state` errors, e.g. `oncely: relay relay-1`. */
  readonly label: string;
  /** What the loop is, e.g. `relay`: `start() needs an idle relay`. */
  readonly kind: string;
  /** Drives every pause; inject a manual clock in tests. */
  readonly clock: Clock;
  /** Source of jitter for the failure backoff. */
  readonly random: () => number;
  /** Pause after a failed round: `fullJitter(failures in a row - 1, backoff)`. */
  readonly backoff: BackoffOptions;
  /** Runs in the background before the first round (opening a wake-up, say); should not throw. */
  readonly beforeRounds?: () => Promise<void>;
  /**
   * One round of work, run again and again while the loop runs. A round that throws counts as a
   * failure: the loop reports it and pauses with backoff; a round that resolves resets the count.
   */
  readonly round: () => Promise<void>;
  /** Told about a failed round and the pause before the next; not called once `stop()` was asked. */
  readonly onFailure: (error: unknown, retryInMs: number) => void;
  /** Called once, synchronously, when `stop()` interrupts a running loop (closing a blocked read). */
  readonly onStop?: () => void;
  /** Runs after the last round, once the status is `stopped` (closing connections, reporting). */
  readonly afterRounds?: () => Promise<void>;
}

/** A start/stop loop in the background, shared by the outbox relay and broker consumers. */
export interface BackgroundLoop {
  readonly status: LoopStatus;
  /** Aborts when `stop()` is called: pass it to waits that should end at once. */
  readonly stopSignal: AbortSignal;
  /**
   * Runs `prepare` (opening a connection, creating a consumer group), then starts the rounds in the
   * background. Throws `invalid_state` at once unless the loop is idle; when `prepare` rejects, the
   * loop is `stopped` and the promise rejects with that error.
   */
  start(prepare?: () => Promise<void>): Promise<void>;
  /**
   * Stops gracefully: the round in flight finishes, pauses end at once. Resolves when the loop has
   * ended (at once for an idle loop, which becomes `stopped`).
   */
  stop(): Promise<void>;
  /** Waits `ms` on the loop's clock, ending early when the loop stops; never rejects. */
  pause(ms: number): Promise<void>;
  /** Throws `invalid_state` unless the loop is idle: for one-off runs such as a relay's `runOnce()`. */
  assertIdle(action: string): void;
}

/** Exponents past this only ever hit the cap; bounding them keeps `2 ** attempt` finite. */
const MAX_EXPONENT = 30;
const ignore = () => undefined;

/**
 * Creates a {@link BackgroundLoop}: rounds one after another, failures paused with full-jitter
 * backoff that resets after a good round, a graceful stop that lets the round in flight finish.
 *
 * ```ts
 * const loop = backgroundLoop({ label: 'oncely/mysql: poller p1', kind: 'poller', clock, random: Math.random,
 *   backoff: { baseMs: 100, capMs: 10_000 }, round: pollOnce, onFailure: (error, retryInMs) => report(error, retryInMs) });
 * await loop.start();
 * process.on('SIGTERM', () => loop.stop());
 * ```
 */
export function backgroundLoop(options: BackgroundLoopOptions): BackgroundLoop {
  const { clock, label, kind } = options;
  // fullJitter refuses an unusable backoff with a coded error, before anything starts.
  fullJitter(0, options.backoff, () => 0);
  let status: LoopStatus = 'idle';
  let done: Promise<void> | undefined;
  const stopping = new AbortController();

  const running = () => status === 'running';
  const pause = (ms: number) => clock.sleep(ms, stopping.signal).catch(ignore);

  async function rounds(): Promise<void> {
    let failures = 0;
    try {
      // A stop() during `prepare` leaves nothing to open.
      if (running()) await options.beforeRounds?.();
      while (running()) {
        try {
          await options.round();
          failures = 0;
        } catch (error) {
          if (!running()) break;
          failures += 1;
          const retryInMs = fullJitter(Math.min(failures - 1, MAX_EXPONENT), options.backoff, options.random);
          options.onFailure(error, retryInMs);
          await pause(retryInMs);
        }
      }
    } finally {
      status = 'stopped';
      await options.afterRounds?.();
    }
  }

  const assertIdle = (action: string) => {
    if (status !== 'idle') throw new OncelyError('invalid_state', `${label} is ${status}; ${action}() needs an idle ${kind}`);
  };

  return {
    get status() {
      return status;
    },
    stopSignal: stopping.signal,
    assertIdle,
    pause,
    start(prepare) {
      assertIdle('start');
      status = 'running';
      if (!prepare) {
        done = rounds();
        return Promise.resolve();
      }
      const ready = prepare();
      // Registered before the caller's handlers: the status is `stopped` by the time it sees the failure.
      done = ready.then(rounds, () => {
        status = 'stopped';
      });
      return ready;
    },
    async stop() {
      if (status === 'idle') status = 'stopped';
      if (status === 'running') {
        status = 'stopping';
        stopping.abort();
        options.onStop?.();
      }
      await done;
    },
  };
}
