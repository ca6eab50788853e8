import { type Clock, systemClock } from '../clock.js';
import { OncelyError } from '../errors.js';
import type { EventListener } from '../events.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import { type Classifier, defaultClassify } from './classify.js';
import type { RetryEvent } from './events.js';
import type { RetryBudget } from './retry-budget.js';

/** Options of {@link retryPolicy}; every field is optional. */
export interface RetryPolicyOptions<T = unknown> {
  /** Total attempts, the first included (default 3, as AWS SDK v3 standard mode). */
  readonly maxAttempts?: number;
  /** Backoff base: full jitter draws from [0, min(capMs, baseMs·2^n)) (default 100 ms). */
  readonly baseMs?: number;
  /** Backoff cap (default 20 000 ms). */
  readonly capMs?: number;
  /** End-to-end deadline across attempts and sleeps (default 30 000 ms; `Infinity` for none). */
  readonly deadlineMs?: number;
  /** Per-attempt timeout (default `deadlineMs / maxAttempts`, or 10 000 ms without a deadline). */
  readonly attemptTimeoutMs?: number;
  /** Decides success, definitive failure or retry (default {@link defaultClassify}). */
  readonly classify?: Classifier<T>;
  /** Shared retry budget: refuses retries beyond a share of traffic. */
  readonly budget?: RetryBudget;
  /** Shared circuit breaker: rejects attempts while open. */
  readonly breaker?: CircuitBreaker;
  /** Uniform random source in [0, 1) for the jitter (default `Math.random`). */
  readonly random?: () => number;
  readonly clock?: Clock;
  readonly onEvent?: EventListener<RetryEvent>;
}

const POLICY = Symbol.for('oncely.retryPolicy');

/** A validated, immutable retry policy; share it (and its budget and breaker) across calls. */
export interface RetryPolicy<T = unknown> {
  readonly maxAttempts: number;
  readonly baseMs: number;
  readonly capMs: number;
  readonly deadlineMs: number;
  readonly attemptTimeoutMs: number;
  readonly classify: Classifier<T>;
  readonly budget: RetryBudget | undefined;
  readonly breaker: CircuitBreaker | undefined;
  readonly random: () => number;
  readonly clock: Clock;
  readonly onEvent: EventListener<RetryEvent> | undefined;
  readonly [POLICY]: true;
}

const reject = (field: string, rule: string, value: unknown) =>
  new OncelyError('invalid_option', `oncely: retry policy ${field} must be ${rule}, got ${String(value)}`);

function finiteAtLeastZero(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw reject(field, 'a finite number >= 0', value);
  return value;
}

function positiveDuration(field: string, value: unknown): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value <= 0) throw reject(field, 'a number of ms > 0 (or Infinity)', value);
  return value;
}

/**
 * Validates retry options once and freezes them. Invalid values (negative delays, `capMs` below
 * `baseMs`, zero attempts, a deadline shorter than one attempt) throw `OncelyError('invalid_option')`
 * naming the field.
 */
export function retryPolicy<T = unknown>(options: RetryPolicyOptions<T> = {}): RetryPolicy<T> {
  if (isRetryPolicy<T>(options)) return options;
  const maxAttempts = options.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw reject('maxAttempts', 'an integer >= 1', maxAttempts);
  const baseMs = finiteAtLeastZero('baseMs', options.baseMs ?? 100);
  const capMs = finiteAtLeastZero('capMs', options.capMs ?? 20_000);
  if (capMs < baseMs) throw reject('capMs', `at least baseMs (${baseMs})`, capMs);
  const deadlineMs = positiveDuration('deadlineMs', options.deadlineMs ?? 30_000);
  const attemptTimeoutMs = positiveDuration(
    'attemptTimeoutMs',
    options.attemptTimeoutMs ?? (Number.isFinite(deadlineMs) ? deadlineMs / maxAttempts : 10_000),
  );
  if (deadlineMs < attemptTimeoutMs) {
    throw reject('deadlineMs', `at least one attempt (attemptTimeoutMs ${attemptTimeoutMs})`, deadlineMs);
  }
  for (const [field, value] of [
    ['classify', options.classify],
    ['random', options.random],
    ['onEvent', options.onEvent],
  ] as const) {
    if (value !== undefined && typeof value !== 'function') throw reject(field, 'a function', typeof value);
  }
  if (options.budget !== undefined && typeof options.budget?.withdraw !== 'function') {
    throw reject('budget', 'a retryBudget()', typeof options.budget);
  }
  if (options.breaker !== undefined && typeof options.breaker?.admit !== 'function') {
    throw reject('breaker', 'a circuitBreaker()', typeof options.breaker);
  }
  if (options.clock !== undefined && typeof options.clock?.sleep !== 'function') {
    throw reject('clock', 'a Clock', typeof options.clock);
  }
  return Object.freeze({
    maxAttempts,
    baseMs,
    capMs,
    deadlineMs,
    attemptTimeoutMs,
    classify: options.classify ?? (defaultClassify as Classifier<T>),
    budget: options.budget,
    breaker: options.breaker,
    random: options.random ?? Math.random,
    clock: options.clock ?? systemClock,
    onEvent: options.onEvent,
    [POLICY]: true as const,
  });
}

/** True for a policy made by {@link retryPolicy}. */
export function isRetryPolicy<T = unknown>(value: unknown): value is RetryPolicy<T> {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[POLICY] === true;
}
