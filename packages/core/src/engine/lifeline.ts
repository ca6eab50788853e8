import type { Clock } from '../clock.js';
import { OncelyError } from '../errors.js';

/** Starts a timer and returns its cancel function. */
export type Schedule = (ms: number, callback: () => void) => () => void;

/** The lease a handler's signal watches: when it ends, and how to time it and say it lapsed. */
export interface LeaseTimer {
  readonly now: () => number;
  readonly schedule: Schedule;
  readonly lapsed: () => unknown;
}

/**
 * The handler's abort signal: aborted by the caller's signal or when the lease lapses. An
 * AbortController and a lease timer cost microseconds on every request, so both exist only once
 * the handler reads `signal`; until then a lapse is judged from the deadline.
 */
export class Lifeline {
  #controller: AbortController | undefined;
  #abortedWith: { readonly reason: unknown } | undefined;
  #deadline = Number.POSITIVE_INFINITY;
  #cancelTimer: (() => void) | undefined;
  /** Where the caller's signal is read, once, when the handler first reads its own: an HTTP binding builds it only then. */
  readonly #caller: { readonly signal?: AbortSignal | undefined };
  #callerSignal: AbortSignal | undefined;
  #stopped = false;
  readonly #onCallerAbort = () => this.abort(this.#callerSignal?.reason);
  readonly #lease: LeaseTimer | undefined;

  /** Without `lease` (transactional mode) only the caller's abort reaches the signal. */
  constructor(caller: { readonly signal?: AbortSignal | undefined }, lease?: LeaseTimer) {
    this.#caller = caller;
    this.#lease = lease;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      // The caller's abort matters only to a handler that watches its signal, so it is linked only now.
      const callerSignal = this.#caller.signal;
      if (callerSignal?.aborted) this.abort(callerSignal.reason);
      else if (callerSignal && !this.#stopped) {
        this.#callerSignal = callerSignal;
        callerSignal.addEventListener('abort', this.#onCallerAbort, { once: true });
      }
      this.#checkLapse();
      if (this.#abortedWith) this.#controller.abort(this.#abortedWith.reason);
      else this.#startTimer();
    }
    return this.#controller.signal;
  }

  /** Aborts once, with the first reason. */
  abort(reason: unknown): void {
    if (this.#abortedWith) return;
    this.#abortedWith = { reason };
    this.#cancelTimer?.();
    this.#controller?.abort(reason);
  }

  /** The lease now runs `ms` from now; a lapse that came first still counts. */
  renew(ms: number): void {
    if (!this.#lease) return;
    // The first renewal has no deadline to have lapsed: no clock read.
    if (this.#deadline !== Number.POSITIVE_INFINITY) this.#checkLapse();
    this.#deadline = this.#lease.now() + ms;
    if (this.#controller) this.#startTimer();
  }

  /** The handler finished: no timer, no link to the caller's signal. */
  stop(): void {
    this.#stopped = true;
    this.#cancelTimer?.();
    this.#deadline = Number.POSITIVE_INFINITY;
    this.#callerSignal?.removeEventListener('abort', this.#onCallerAbort);
  }

  #checkLapse(): void {
    if (this.#lease && this.#lease.now() >= this.#deadline) this.abort(this.#lease.lapsed());
  }

  #startTimer(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    if (!this.#lease || this.#abortedWith || this.#deadline === Number.POSITIVE_INFINITY) return;
    // A timer may fire a little before the clock says the deadline passed: then it waits again.
    const remaining = Math.max(1, this.#deadline - this.#lease.now());
    this.#cancelTimer = this.#lease.schedule(remaining, () => {
      this.#checkLapse();
      this.#startTimer();
    });
  }
}

/** A shared abort reason: aborting without one makes the platform build a DOMException with a stack. */
const TIMER_CANCELLED = Object.freeze({ reason: 'oncely: timer cancelled' });

/** The lease timer of an engine's handlers: its clock, a timer through it, and the error a lapse aborts with. */
export function leaseTimer(clock: Clock): LeaseTimer {
  /** A timer through the clock: `schedule` where it has one, else a cancellable `sleep`. */
  const schedule: Schedule = clock.schedule
    ? (ms, callback) => clock.schedule!(ms, callback)
    : (ms, callback) => {
        const cancel = new AbortController();
        clock.sleep(ms, cancel.signal).then(callback, () => undefined);
        return () => cancel.abort(TIMER_CANCELLED);
      };
  return {
    now: () => clock.now(),
    schedule,
    lapsed: () => new OncelyError('lease_lost', 'oncely: the lease lapsed before the handler finished'),
  };
}
