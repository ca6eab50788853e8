import { describe, expect, it } from 'vitest';
import { isOncelyError, manualClock } from '../../src/index.js';
import {
  type AttemptContext,
  circuitBreaker,
  type RetryEvent,
  retry,
  retryBudget,
  retryPolicy,
} from '../../src/retry.js';
import { drive } from './drive.js';

const status = (code: number, headers: Record<string, string> = {}) => new Response(null, { status: code, headers });

/** A dependency that answers from a script, one entry per attempt, and records what each attempt saw. */
function scripted(answers: (number | Error | 'hang')[]) {
  const seen: AttemptContext[] = [];
  const fn = async (context: AttemptContext) => {
    seen.push(context);
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)]!;
    if (answer === 'hang') return new Promise<Response>(() => undefined);
    if (answer instanceof Error) throw answer;
    return status(answer);
  };
  return { fn, seen };
}

function setup(options: Parameters<typeof retryPolicy<Response>>[0] = {}) {
  const clock = manualClock(1_000_000);
  const events: RetryEvent[] = [];
  const policy = retryPolicy<Response>({ random: () => 0.5, clock, onEvent: (event) => events.push(event), ...options });
  return { clock, events, policy };
}

const reset = () => new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });

describe('retry: attempts and backoff', () => {
  it('returns the first success without sleeping', async () => {
    const { clock, policy, events } = setup();
    const { fn, seen } = scripted([201]);
    const outcome = await drive(clock, retry(fn, policy));
    expect(outcome.outcome).toBe('succeeded');
    expect(outcome.outcome === 'succeeded' && outcome.value.status).toBe(201);
    expect(seen.map((context) => context.attempt)).toEqual([1]);
    expect(events.filter((event) => event.type === 'sleep')).toEqual([]);
  });

  it('maxAttempts counts every attempt, the first included', async () => {
    const { clock, policy } = setup({ maxAttempts: 3 });
    const { fn, seen } = scripted([429]);
    const outcome = await drive(clock, retry(fn, policy));
    expect(seen.length).toBe(3);
    expect(outcome).toMatchObject({ outcome: 'failed', attempts: 3, stoppedBy: 'attempts' });
  });

  it('sleeps full jitter from the injected random source between attempts', async () => {
    const { clock, policy, events } = setup({ maxAttempts: 4, baseMs: 100, capMs: 250 });
    const { fn } = scripted([503, 503, 503, 200]);
    const outcome = await drive(clock, retry(fn, policy), 10);
    expect(outcome.outcome).toBe('succeeded');
    // random 0.5: floor(0.5 * min(250, 100·2^n)) for n = 0, 1, 2.
    expect(events.filter((event) => event.type === 'sleep').map((event) => event.type === 'sleep' && event.delayMs)).toEqual([50, 100, 125]);
    const starts = events.filter((event) => event.type === 'attempt').map((event) => event.at - 1_000_000);
    expect(starts).toEqual([0, 50, 150, 275]);
  });

  it('a definitive answer stops at once: 422 fails after one attempt and is returned as the error', async () => {
    const { clock, policy, events } = setup();
    const { fn, seen } = scripted([422]);
    const outcome = await drive(clock, retry(fn, policy));
    expect(seen.length).toBe(1);
    expect(outcome.outcome).toBe('failed');
    expect(outcome.outcome === 'failed' && (outcome.error as Response).status).toBe(422);
    expect(outcome.outcome === 'failed' && outcome.stoppedBy).toBe('answer');
    expect(events.some((event) => event.type === 'sleep')).toBe(false);
  });

  it('an unrecognised thrown error is not retried', async () => {
    const { clock, policy } = setup();
    const bug = new RangeError('bug in the caller');
    const { fn, seen } = scripted([bug]);
    const outcome = await drive(clock, retry(fn, policy));
    expect(seen.length).toBe(1);
    expect(outcome).toEqual({ outcome: 'failed', error: bug, attempts: 1, stoppedBy: 'answer' });
  });

  it('ends unknown, with the key, when attempts run out after a failure that may have been applied', async () => {
    const { clock, policy } = setup({ maxAttempts: 2 });
    const { fn } = scripted([reset()]);
    const outcome = await drive(clock, retry(fn, policy, { key: 'key-123' }));
    expect(outcome.outcome).toBe('unknown');
    expect(outcome.outcome === 'unknown' && outcome.key).toBe('key-123');
    expect(outcome.outcome === 'unknown' && outcome.stoppedBy).toBe('attempts');
    expect(outcome.outcome === 'unknown' && (outcome.lastError as Error).message).toBe('fetch failed');
  });

  it('ends failed, not unknown, when every attempt was refused before running', async () => {
    const { clock, policy } = setup({ maxAttempts: 2 });
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) });
    const outcome = await drive(clock, retry(scripted([refused]).fn, policy, { key: 'k' }));
    expect(outcome).toMatchObject({ outcome: 'failed', stoppedBy: 'attempts', error: refused });
  });

  it('one ambiguous attempt among refusals is enough to make the outcome unknown', async () => {
    const { clock, policy } = setup({ maxAttempts: 3 });
    const outcome = await drive(clock, retry(scripted([429, 504, 429]).fn, policy, { key: 'k' }));
    expect(outcome.outcome).toBe('unknown');
    expect(outcome.outcome === 'unknown' && (outcome.lastError as Response).status).toBe(429);
  });
});

describe('retry: deadline and per-attempt timeout (fake clock)', () => {
  it('aborts an attempt at its timeout, with an attempt_timeout reason, and retries', async () => {
    const { clock, policy } = setup({ deadlineMs: 10_000, attemptTimeoutMs: 2_000, maxAttempts: 2 });
    const { fn, seen } = scripted(['hang', 200]);
    const outcome = await drive(clock, retry(fn, policy), 100);
    expect(outcome.outcome).toBe('succeeded');
    expect(seen[0]!.signal.aborted).toBe(true);
    expect(isOncelyError(seen[0]!.signal.reason, 'attempt_timeout')).toBe(true);
    expect(seen[1]!.signal.aborted).toBe(false);
    expect(seen[1]!.remainingMs).toBe(10_000 - 2_000 - 50);
  });

  it('ends unknown at the deadline even if the attempt ignores its signal', async () => {
    const { clock, policy, events } = setup({ deadlineMs: 5_000, attemptTimeoutMs: 2_000, maxAttempts: 10 });
    const { fn, seen } = scripted(['hang']);
    const started = clock.now();
    const outcome = await drive(clock, retry(fn, policy, { key: 'k-deadline' }), 100);
    expect(outcome).toMatchObject({ outcome: 'unknown', key: 'k-deadline', stoppedBy: 'deadline' });
    expect(isOncelyError(outcome.outcome === 'unknown' && outcome.lastError, 'deadline_exceeded')).toBe(true);
    const end = events.find((event) => event.type === 'outcome')!;
    expect(end.at - started).toBeLessThanOrEqual(5_000);
    // 2 000 + 50 + 2 000 + 100 leaves 850 ms: the third attempt gets only what remains.
    expect(seen.map((context) => context.remainingMs)).toEqual([5_000, 2_950, 850]);
  });

  it('does not start a sleep that would end past the deadline', async () => {
    const { clock, policy } = setup({ deadlineMs: 1_000, attemptTimeoutMs: 1_000, baseMs: 5_000, capMs: 5_000 });
    const { fn, seen } = scripted([503]);
    const outcome = await drive(clock, retry(fn, policy, { key: 'k' }), 100);
    expect(seen.length).toBe(1);
    expect(outcome).toMatchObject({ outcome: 'unknown', stoppedBy: 'deadline' });
  });
});

describe('retry: Retry-After (fake clock)', () => {
  it('waits at least the seconds the server asked for', async () => {
    const { clock, policy, events } = setup({ deadlineMs: 60_000, attemptTimeoutMs: 10_000 });
    const answers = [status(429, { 'retry-after': '7' }), status(200)];
    const fn = async () => answers.shift()!;
    const outcome = await drive(clock, retry(fn, policy), 500);
    expect(outcome.outcome).toBe('succeeded');
    const sleep = events.find((event) => event.type === 'sleep');
    expect(sleep).toMatchObject({ delayMs: 7_000, retryAfterMs: 7_000, reason: 'throttled' });
    const starts = events.filter((event) => event.type === 'attempt').map((event) => event.at);
    expect(starts[1]! - starts[0]!).toBe(7_000);
  });

  it('honours an HTTP-date, measured on the policy clock', async () => {
    const { clock, policy, events } = setup({ deadlineMs: 60_000, attemptTimeoutMs: 10_000 });
    const at = new Date(clock.now() + 12_000).toUTCString();
    const answers = [status(503, { 'retry-after': at }), status(200)];
    await drive(clock, retry(async () => answers.shift()!, policy), 500);
    expect(events.find((event) => event.type === 'sleep')).toMatchObject({ delayMs: 12_000 });
  });

  it('stops instead of waiting when Retry-After does not fit the deadline', async () => {
    const { clock, policy, events } = setup({ deadlineMs: 10_000, attemptTimeoutMs: 5_000 });
    let calls = 0;
    const outcome = await drive(
      clock,
      retry(async () => {
        calls += 1;
        return status(429, { 'retry-after': '30' });
      }, policy),
    );
    expect(calls).toBe(1);
    expect(outcome).toMatchObject({ outcome: 'failed', stoppedBy: 'deadline' });
    expect(events.some((event) => event.type === 'sleep')).toBe(false);
  });
});

describe('retry: cancellation', () => {
  it('interrupts the backoff sleep at once, without waiting for the clock', async () => {
    const { clock, policy } = setup({ baseMs: 10_000, capMs: 10_000 });
    const controller = new AbortController();
    const { fn, seen } = scripted([503]);
    const pending = retry(fn, policy, { signal: controller.signal, key: 'k' });
    await clock.advance(0);
    expect(clock.pending).toBe(1);
    controller.abort(new Error('user left'));
    const outcome = await pending;
    expect(seen.length).toBe(1);
    expect(outcome).toMatchObject({ outcome: 'unknown', stoppedBy: 'aborted' });
    expect(clock.pending).toBe(0);
  });

  it('aborts the attempt in flight with the caller\'s reason: unknown, since it may have run', async () => {
    const { clock, policy } = setup();
    const controller = new AbortController();
    const { fn, seen } = scripted(['hang']);
    const pending = retry(fn, policy, { signal: controller.signal, key: 'k' });
    await clock.advance(0);
    const why = new Error('shutdown');
    controller.abort(why);
    const outcome = await pending;
    expect(seen[0]!.signal.reason).toBe(why);
    expect(outcome).toEqual({ outcome: 'unknown', key: 'k', lastError: why, attempts: 1, stoppedBy: 'aborted' });
  });

  it('never calls fn when already cancelled', async () => {
    const { policy } = setup();
    const controller = new AbortController();
    controller.abort(new Error('too late'));
    const { fn, seen } = scripted([200]);
    const outcome = await retry(fn, policy, { signal: controller.signal });
    expect(seen.length).toBe(0);
    expect(outcome).toMatchObject({ outcome: 'failed', attempts: 0, stoppedBy: 'aborted' });
  });
});

describe('retry: budget and breaker', () => {
  it('a shared budget refuses retries beyond its share and says so', async () => {
    const clock = manualClock(0);
    const budget = retryBudget({ ratio: 0.5, minRetriesPerSec: 0, clock });
    const { events, policy } = setup({ clock, budget, maxAttempts: 5 });
    const calls: number[] = [];
    for (let call = 0; call < 4; call++) {
      let attempts = 0;
      await drive(clock, retry(async () => {
        attempts += 1;
        return status(503);
      }, policy));
      calls.push(attempts);
    }
    // Deposits of 0.5 per call: the 2nd call affords one retry, the 4th another; none affords two.
    expect(calls.reduce((sum, attempts) => sum + attempts - 1, 0)).toBe(2);
    // Every call ends on a refusal: the budget, not maxAttempts, stopped them all.
    expect(events.filter((event) => event.type === 'budget_refused').length).toBe(4);
  });

  it('an open breaker rejects before any attempt and the outcome says circuit_open', async () => {
    const clock = manualClock(0);
    const transitions: RetryEvent[] = [];
    const breaker = circuitBreaker({ mode: { kind: 'consecutive', failures: 2 }, clock, onEvent: (event) => transitions.push(event) });
    const { policy, events } = setup({ clock, breaker, maxAttempts: 2 });
    const first = await drive(clock, retry(scripted([503]).fn, policy, { key: 'k1' }), 10);
    expect(first.outcome).toBe('unknown');
    expect(breaker.state).toBe('open');
    expect(transitions).toMatchObject([{ type: 'breaker_transition', from: 'closed', to: 'open' }]);
    const { fn, seen } = scripted([200]);
    const second = await retry(fn, policy, { key: 'k2' });
    expect(seen.length).toBe(0);
    expect(second.outcome).toBe('failed');
    expect(isOncelyError(second.outcome === 'failed' && second.error, 'circuit_open')).toBe(true);
    expect(events.filter((event) => event.type === 'breaker_rejected')).toMatchObject([{ attempt: 1, state: 'open' }]);
  });

  it('a 422 does not count against the breaker; a 500 does', async () => {
    const clock = manualClock(0);
    const breaker = circuitBreaker({ mode: { kind: 'consecutive', failures: 2 }, clock });
    const { policy } = setup({ clock, breaker });
    for (let index = 0; index < 3; index++) await retry(scripted([422]).fn, policy);
    expect(breaker.state).toBe('closed');
    for (let index = 0; index < 2; index++) await retry(scripted([500]).fn, policy);
    expect(breaker.state).toBe('open');
  });
});

describe('retry: events', () => {
  it('reports each attempt, its result, the sleep and the outcome, in order', async () => {
    const { clock, policy, events } = setup({ maxAttempts: 2 });
    await drive(clock, retry(scripted([503, 200]).fn, policy), 10);
    expect(events.map((event) => event.type)).toEqual(['attempt', 'attempt_result', 'sleep', 'attempt', 'attempt_result', 'outcome']);
    expect(events[1]).toMatchObject({ verdict: 'retry', reason: 'unavailable', effect: 'maybe_applied' });
    expect(events[5]).toMatchObject({ outcome: 'succeeded', attempts: 2, stoppedBy: 'answer', durationMs: 50 });
  });

  it('a throwing listener changes nothing', async () => {
    const clock = manualClock(0);
    const policy = retryPolicy({ clock, onEvent: () => { throw new Error('metrics down'); } });
    expect((await retry(async () => 'ok', policy)).outcome).toBe('succeeded');
  });
});
