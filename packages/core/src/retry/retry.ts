import { OncelyError } from '../errors.js';
import { emitSafely } from '../events.js';
import type { BreakerPermit } from './circuit-breaker.js';
import type { AttemptResult, Classification } from './classify.js';
import type { RetryEvent, StopReason } from './events.js';
import { fullJitter } from './full-jitter.js';
import type { RetryOutcome } from './outcome.js';
import { type RetryPolicy, type RetryPolicyOptions, retryPolicy } from './retry-policy.js';

/** What each attempt receives. */
export interface AttemptContext {
  /** Aborts at the attempt timeout, the deadline, or the caller's cancellation: pass it on. */
  readonly signal: AbortSignal;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** Time left before the end-to-end deadline when the attempt started (Infinity without one). */
  readonly remainingMs: number;
}

/** Per-call options of {@link retry}. */
export interface RetryCallOptions {
  /** The caller's cancellation: interrupts the attempt and the backoff sleep. */
  readonly signal?: AbortSignal;
  /** The operation's idempotency key, returned with an `unknown` outcome. */
  readonly key?: string;
}

/** Longest timer the platforms honour; longer ones fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

type Interruption = 'caller' | 'timeout' | 'deadline';
type EventBody = RetryEvent extends infer E ? (E extends unknown ? Omit<E, 'at'> : never) : never;

/**
 * Runs `fn` until the classifier calls a result definitive or a limit ends it: `maxAttempts`, the
 * end-to-end deadline, the budget, the breaker or the caller's signal. Each attempt gets a signal that
 * aborts at its timeout; backoff is full jitter, stretched to the server's `Retry-After` when that
 * still fits the deadline. Never throws for `fn`'s errors: they come back in the outcome.
 */
export async function retry<T>(
  fn: (context: AttemptContext) => Promise<T>,
  policyOrOptions: RetryPolicy<T> | RetryPolicyOptions<T> = {},
  call: RetryCallOptions = {},
): Promise<RetryOutcome<T>> {
  const policy = retryPolicy(policyOrOptions);
  const { clock, breaker, budget } = policy;
  const startedAt = clock.now();
  const deadline = startedAt + policy.deadlineMs;
  const emit = (body: EventBody) => emitSafely(policy.onEvent, { ...body, at: clock.now() } as RetryEvent);
  budget?.deposit();

  let attempts = 0;
  let lastError: unknown;
  let mayHaveApplied = false;

  const settle = <O extends RetryOutcome<T>>(outcome: O, stoppedBy: StopReason): O => {
    emit({ type: 'outcome', outcome: outcome.outcome, attempts, stoppedBy, durationMs: clock.now() - startedAt });
    return outcome;
  };
  const stop = (stoppedBy: Exclude<StopReason, 'answer'>): RetryOutcome<T> =>
    settle(
      mayHaveApplied
        ? { outcome: 'unknown', key: call.key, lastError, attempts, stoppedBy }
        : { outcome: 'failed', error: lastError, attempts, stoppedBy },
      stoppedBy,
    );

  for (;;) {
    if (call.signal?.aborted) {
      if (attempts === 0) lastError = call.signal.reason;
      return stop('aborted');
    }
    const remainingMs = deadline - clock.now();
    if (remainingMs <= 0) return stop('deadline');
    let permit: BreakerPermit | undefined;
    if (breaker) {
      const admission = breaker.admit();
      if (admission.kind === 'rejected') {
        emit({ type: 'breaker_rejected', attempt: attempts + 1, state: admission.state });
        if (attempts === 0) lastError = new OncelyError('circuit_open', `oncely: the circuit is ${admission.state}; no attempt was made`);
        return stop('breaker');
      }
      permit = admission.permit;
    }

    attempts += 1;
    const attempt = attempts;
    emit({ type: 'attempt', attempt, remainingMs });
    const attemptStart = clock.now();
    let run: { result: AttemptResult<T>; interruption: Interruption | undefined };
    let classification: Classification;
    try {
      run = await runAttempt(fn, policy, call.signal, attempt, remainingMs);
      if (run.interruption === 'caller') {
        permit?.report('ignored');
        // The attempt was in flight: it may have reached the server.
        mayHaveApplied = true;
        lastError = call.signal?.reason;
        emit({ type: 'attempt_result', attempt, verdict: 'aborted', durationMs: clock.now() - attemptStart });
        return stop('aborted');
      }
      classification = run.interruption
        ? { verdict: 'retry', reason: 'timeout', effect: 'maybe_applied' }
        : policy.classify(run.result, { now: clock.now() });
    } catch (error) {
      // A throwing classifier must not leave a half-open probe slot taken.
      permit?.report('ignored');
      throw error;
    }
    permit?.report(
      classification.verdict === 'retry' || (classification.verdict === 'failure' && classification.blame === 'dependency')
        ? 'failure'
        : 'success',
    );
    emit({
      type: 'attempt_result',
      attempt,
      verdict: classification.verdict,
      ...(classification.verdict === 'retry' ? { reason: classification.reason, effect: classification.effect } : {}),
      durationMs: clock.now() - attemptStart,
    });

    const { result } = run;
    if (classification.verdict === 'success') {
      if (result.kind === 'returned') return settle({ outcome: 'succeeded', value: result.value, attempts }, 'answer');
      // A classifier that accepts a thrown error has nothing to return as the value.
      return settle({ outcome: 'failed', error: result.error, attempts, stoppedBy: 'answer' }, 'answer');
    }
    lastError = result.kind === 'threw' ? result.error : result.value;
    if (classification.verdict === 'failure') {
      return settle({ outcome: 'failed', error: lastError, attempts, stoppedBy: 'answer' }, 'answer');
    }
    if (classification.effect === 'maybe_applied') mayHaveApplied = true;
    if (run.interruption === 'deadline') return stop('deadline');
    if (attempts >= policy.maxAttempts) return stop('attempts');

    const jitter = fullJitter(attempts - 1, policy, policy.random);
    const delayMs = classification.retryAfterMs === undefined ? jitter : Math.max(jitter, classification.retryAfterMs);
    // Sleeping past the deadline would only end in `deadline` with one attempt fewer.
    if (clock.now() + delayMs >= deadline || delayMs > MAX_TIMER_MS) return stop('deadline');
    if (budget && budget.withdraw() === 'refused') {
      emit({ type: 'budget_refused', attempt, balance: budget.balance });
      return stop('budget');
    }
    emit({
      type: 'sleep',
      attempt,
      delayMs,
      reason: classification.reason,
      ...(classification.retryAfterMs === undefined ? {} : { retryAfterMs: classification.retryAfterMs }),
    });
    try {
      await clock.sleep(delayMs, call.signal);
    } catch {
      return stop('aborted');
    }
  }
}

/**
 * Runs one attempt under its own signal. The attempt ends at its timeout even if `fn` ignores the
 * signal: the late result is dropped, because the deadline is a promise to the caller.
 */
async function runAttempt<T>(
  fn: (context: AttemptContext) => Promise<T>,
  policy: RetryPolicy<T>,
  callerSignal: AbortSignal | undefined,
  attempt: number,
  remainingMs: number,
): Promise<{ result: AttemptResult<T>; interruption: Interruption | undefined }> {
  const controller = new AbortController();
  let interruption: Interruption | undefined;
  let interrupt: (why: Interruption, reason: unknown) => void = () => undefined;
  const interrupted = new Promise<never>((_, rejectWith) => {
    interrupt = (why, reason) => {
      if (controller.signal.aborted) return;
      interruption = why;
      controller.abort(reason);
      rejectWith(reason);
    };
  });
  interrupted.catch(() => undefined);

  const deadlineBound = remainingMs <= policy.attemptTimeoutMs;
  const timeoutMs = Math.min(policy.attemptTimeoutMs, remainingMs);
  const timer = new AbortController();
  if (timeoutMs <= MAX_TIMER_MS) {
    policy.clock.sleep(timeoutMs, timer.signal).then(
      () =>
        deadlineBound
          ? interrupt('deadline', new OncelyError('deadline_exceeded', `oncely: the retry deadline passed during attempt ${attempt}`))
          : interrupt('timeout', new OncelyError('attempt_timeout', `oncely: attempt ${attempt} timed out after ${timeoutMs} ms`)),
      () => undefined,
    );
  }
  const onCallerAbort = () => interrupt('caller', callerSignal?.reason);
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  try {
    const pending = Promise.resolve().then(() => fn({ signal: controller.signal, attempt, remainingMs }));
    pending.catch(() => undefined);
    const value = await Promise.race([pending, interrupted]);
    return { result: { kind: 'returned', value }, interruption: undefined };
  } catch (error) {
    return { result: { kind: 'threw', error: interruption ? controller.signal.reason : error }, interruption };
  } finally {
    timer.abort();
    callerSignal?.removeEventListener('abort', onCallerAbort);
  }
}
