import { type Clock, systemClock } from '../clock.js';
import { OncelyError } from '../errors.js';
import { emitSafely, type EventListener } from '../events.js';
import { integerOption } from '../options/option-checks.js';
import type { BreakerState, RetryEvent } from './events.js';
import { type SlidingWindow, slidingWindow } from './sliding-window.js';

/** When the breaker opens: after `failures` in a row, or when a sampled failure ratio is too high. */
export type BreakerMode =
  | { readonly kind: 'consecutive'; readonly failures: number }
  | {
      readonly kind: 'sampling';
      /** Opens when failures / calls in the window reaches this (0 < ratio <= 1). */
      readonly failureRatio: number;
      /** ...and the window holds at least this many calls, so one early failure cannot open it. */
      readonly minimumCalls: number;
      readonly windowMs: number;
    };

/** Options of {@link circuitBreaker}. */
export interface CircuitBreakerOptions {
  /** Default `{ kind: 'consecutive', failures: 5 }`. */
  readonly mode?: BreakerMode;
  /** How long the breaker stays open before it lets probes through (default 10 000 ms). */
  readonly halfOpenAfterMs?: number;
  /** Probes allowed at once while half-open; that many successes close it (default 1). */
  readonly halfOpenProbes?: number;
  readonly clock?: Clock;
  /** Receives `breaker_transition` events. */
  readonly onEvent?: EventListener<RetryEvent>;
}

/** How an admitted call went: `ignored` (cancelled, say) frees a probe slot without judging health. */
export type CallReport = 'success' | 'failure' | 'ignored';

/** Proof of admission; report exactly once (later reports are ignored). */
export interface BreakerPermit {
  report(result: CallReport): void;
}

/** The breaker's answer to a call. */
export type BreakerAdmission =
  | { readonly kind: 'admitted'; readonly permit: BreakerPermit }
  | { readonly kind: 'rejected'; readonly state: BreakerState; readonly retryAfterMs: number };

/** A circuit breaker, usable with `retry` or alone. */
export interface CircuitBreaker {
  /** The current state (an open breaker whose wait is over reads `half_open`). */
  readonly state: BreakerState;
  /** Asks to make a call. */
  admit(): BreakerAdmission;
  /** Runs `fn` if admitted (throws `OncelyError('circuit_open')` otherwise); a throw counts as a failure. */
  execute<T>(fn: () => Promise<T>): Promise<T>;
}

const positiveInteger = (name: string, value: unknown) => integerOption(`oncely: circuitBreaker ${name}`, value);

/**
 * Creates a circuit breaker. Closed: calls pass and outcomes are counted. Open: calls are rejected
 * until `halfOpenAfterMs` has passed. Half-open: at most `halfOpenProbes` calls at a time; that many
 * successes close it, any failure opens it again. Options are validated here.
 */
export function circuitBreaker(options: CircuitBreakerOptions = {}): CircuitBreaker {
  const mode = options.mode ?? { kind: 'consecutive', failures: 5 };
  const halfOpenAfterMs = positiveInteger('halfOpenAfterMs', options.halfOpenAfterMs ?? 10_000);
  const halfOpenProbes = positiveInteger('halfOpenProbes', options.halfOpenProbes ?? 1);
  const clock = options.clock ?? systemClock;
  let sample: SlidingWindow<'calls' | 'failures'> | undefined;
  if (mode.kind === 'consecutive') {
    positiveInteger('mode.failures', mode.failures);
  } else if (mode.kind === 'sampling') {
    if (typeof mode.failureRatio !== 'number' || !(mode.failureRatio > 0 && mode.failureRatio <= 1)) {
      throw new OncelyError('invalid_option', `oncely: circuitBreaker mode.failureRatio must be in (0, 1], got ${mode.failureRatio}`);
    }
    positiveInteger('mode.minimumCalls', mode.minimumCalls);
    sample = slidingWindow(positiveInteger('mode.windowMs', mode.windowMs), ['calls', 'failures'] as const);
  } else {
    throw new OncelyError('invalid_option', "oncely: circuitBreaker mode.kind must be 'consecutive' or 'sampling'");
  }

  let state: BreakerState = 'closed';
  // Permits from an earlier state must not judge the current one.
  let generation = 0;
  let consecutiveFailures = 0;
  let openedAt = 0;
  let probesInFlight = 0;
  let probeSuccesses = 0;

  const moveTo = (next: BreakerState) => {
    const from = state;
    state = next;
    generation += 1;
    consecutiveFailures = 0;
    probesInFlight = 0;
    probeSuccesses = 0;
    sample?.clear();
    if (next === 'open') openedAt = clock.now();
    emitSafely(options.onEvent, { type: 'breaker_transition', at: clock.now(), from, to: next });
  };
  const refresh = () => {
    if (state === 'open' && clock.now() - openedAt >= halfOpenAfterMs) moveTo('half_open');
  };

  const onReport = (permitGeneration: number, result: CallReport) => {
    if (permitGeneration !== generation) return;
    if (state === 'half_open') {
      probesInFlight -= 1;
      if (result === 'failure') moveTo('open');
      else if (result === 'success' && ++probeSuccesses >= halfOpenProbes) moveTo('closed');
      return;
    }
    if (state !== 'closed' || result === 'ignored') return;
    if (mode.kind === 'consecutive') {
      consecutiveFailures = result === 'failure' ? consecutiveFailures + 1 : 0;
      if (consecutiveFailures >= mode.failures) moveTo('open');
      return;
    }
    const now = clock.now();
    sample!.add(now, 'calls');
    if (result === 'failure') sample!.add(now, 'failures');
    const { calls, failures } = sample!.totals(now);
    if (calls >= mode.minimumCalls && failures / calls >= mode.failureRatio) moveTo('open');
  };

  const admit = (): BreakerAdmission => {
    refresh();
    if (state === 'open') {
      return { kind: 'rejected', state, retryAfterMs: Math.max(0, openedAt + halfOpenAfterMs - clock.now()) };
    }
    if (state === 'half_open') {
      if (probesInFlight >= halfOpenProbes) return { kind: 'rejected', state, retryAfterMs: 0 };
      probesInFlight += 1;
    }
    const permitGeneration = generation;
    let reported = false;
    return {
      kind: 'admitted',
      permit: {
        report(result) {
          if (reported) return;
          reported = true;
          onReport(permitGeneration, result);
        },
      },
    };
  };

  return {
    get state() {
      refresh();
      return state;
    },
    admit,
    async execute(fn) {
      const admission = admit();
      if (admission.kind === 'rejected') {
        throw new OncelyError('circuit_open', `oncely: the circuit is ${admission.state}; call rejected`);
      }
      try {
        const value = await fn();
        admission.permit.report('success');
        return value;
      } catch (error) {
        admission.permit.report('failure');
        throw error;
      }
    },
  };
}
