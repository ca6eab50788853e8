import { describe, expect, it } from 'vitest';
import { isOncelyError, manualClock } from '../../src/index.js';
import { circuitBreaker, type RetryEvent } from '../../src/retry.js';

function setup(options: Parameters<typeof circuitBreaker>[0] = {}) {
  const clock = manualClock(0);
  const events: RetryEvent[] = [];
  const breaker = circuitBreaker({ clock, onEvent: (event) => events.push(event), ...options });
  const call = (result: 'success' | 'failure' | 'ignored') => {
    const admission = breaker.admit();
    if (admission.kind === 'admitted') admission.permit.report(result);
    return admission.kind;
  };
  const transitions = () => events.map((event) => (event.type === 'breaker_transition' ? `${event.from}>${event.to}` : event.type));
  return { clock, breaker, call, transitions };
}

describe('circuitBreaker: consecutive mode (fake clock)', () => {
  it('opens after N failures in a row; a success in between resets the count', () => {
    const { breaker, call } = setup({ mode: { kind: 'consecutive', failures: 3 } });
    call('failure');
    call('failure');
    call('success');
    call('failure');
    call('failure');
    expect(breaker.state).toBe('closed');
    call('failure');
    expect(breaker.state).toBe('open');
  });

  it('rejects while open and tells how long is left', async () => {
    const { clock, breaker, call } = setup({ mode: { kind: 'consecutive', failures: 1 }, halfOpenAfterMs: 5_000 });
    call('failure');
    await clock.advance(2_000);
    expect(breaker.admit()).toEqual({ kind: 'rejected', state: 'open', retryAfterMs: 3_000 });
  });

  it('half-opens after the wait and admits only the configured number of probes at once', async () => {
    const { clock, breaker, call } = setup({ mode: { kind: 'consecutive', failures: 1 }, halfOpenAfterMs: 1_000, halfOpenProbes: 2 });
    call('failure');
    await clock.advance(1_000);
    expect(breaker.state).toBe('half_open');
    const first = breaker.admit();
    const second = breaker.admit();
    const third = breaker.admit();
    expect([first.kind, second.kind, third.kind]).toEqual(['admitted', 'admitted', 'rejected']);
    if (first.kind === 'admitted') first.permit.report('success');
    expect(breaker.state).toBe('half_open');
    if (second.kind === 'admitted') second.permit.report('success');
    expect(breaker.state).toBe('closed');
  });

  it('a failed probe opens it again for a full wait', async () => {
    const { clock, breaker, call, transitions } = setup({ mode: { kind: 'consecutive', failures: 1 }, halfOpenAfterMs: 1_000 });
    call('failure');
    await clock.advance(1_000);
    call('failure');
    expect(breaker.state).toBe('open');
    await clock.advance(999);
    expect(breaker.state).toBe('open');
    await clock.advance(1);
    expect(breaker.state).toBe('half_open');
    expect(transitions()).toEqual(['closed>open', 'open>half_open', 'half_open>open', 'open>half_open']);
  });

  it('an ignored probe frees its slot without closing or opening', async () => {
    const { clock, breaker, call } = setup({ mode: { kind: 'consecutive', failures: 1 }, halfOpenAfterMs: 10 });
    call('failure');
    await clock.advance(10);
    expect(call('ignored')).toBe('admitted');
    expect(breaker.state).toBe('half_open');
    expect(call('success')).toBe('admitted');
    expect(breaker.state).toBe('closed');
  });

  it('reports from calls admitted before a transition do not judge the new state', async () => {
    const { clock, breaker, call } = setup({ mode: { kind: 'consecutive', failures: 1 }, halfOpenAfterMs: 10 });
    const old = breaker.admit();
    call('failure');
    await clock.advance(10);
    expect(breaker.state).toBe('half_open');
    if (old.kind === 'admitted') old.permit.report('failure');
    expect(breaker.state).toBe('half_open');
    if (old.kind === 'admitted') old.permit.report('success');
    expect(breaker.state).toBe('half_open');
  });
});

describe('circuitBreaker: sampling mode (fake clock)', () => {
  const mode = { kind: 'sampling', failureRatio: 0.5, minimumCalls: 10, windowMs: 10_000 } as const;

  it('does not open before the minimum number of calls, however bad they are', () => {
    const { breaker, call } = setup({ mode });
    for (let index = 0; index < 9; index++) call('failure');
    expect(breaker.state).toBe('closed');
    call('failure');
    expect(breaker.state).toBe('open');
  });

  it('opens when the failure ratio in the window reaches the threshold', () => {
    const { breaker, call } = setup({ mode });
    for (let index = 0; index < 6; index++) call('success');
    for (let index = 0; index < 5; index++) call('failure');
    expect(breaker.state).toBe('closed');
    call('failure');
    expect(breaker.state).toBe('open');
  });

  it('forgets calls older than the window', async () => {
    const { clock, breaker, call } = setup({ mode });
    for (let index = 0; index < 9; index++) call('failure');
    await clock.advance(10_000);
    call('failure');
    expect(breaker.state).toBe('closed');
  });
});

describe('circuitBreaker: alone', () => {
  it('execute runs the call when closed, counts a throw as a failure and rejects with circuit_open when open', async () => {
    const { breaker } = setup({ mode: { kind: 'consecutive', failures: 1 } });
    expect(await breaker.execute(async () => 42)).toBe(42);
    await expect(breaker.execute(async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    let ran = false;
    const rejected = await breaker
      .execute(async () => {
        ran = true;
      })
      .catch((error: unknown) => error);
    expect(ran).toBe(false);
    expect(isOncelyError(rejected, 'circuit_open')).toBe(true);
  });

  it.each([
    ['mode.failures', { mode: { kind: 'consecutive', failures: 0 } }],
    ['mode.failureRatio', { mode: { kind: 'sampling', failureRatio: 0, minimumCalls: 1, windowMs: 1 } }],
    ['mode.failureRatio', { mode: { kind: 'sampling', failureRatio: 1.5, minimumCalls: 1, windowMs: 1 } }],
    ['mode.minimumCalls', { mode: { kind: 'sampling', failureRatio: 0.5, minimumCalls: 0, windowMs: 1 } }],
    ['mode.windowMs', { mode: { kind: 'sampling', failureRatio: 0.5, minimumCalls: 1, windowMs: -1 } }],
    ['mode.kind', { mode: { kind: 'sometimes' } }],
    ['halfOpenAfterMs', { halfOpenAfterMs: 0 }],
    ['halfOpenProbes', { halfOpenProbes: 0 }],
  ])('rejects a bad %s at creation', (field, options) => {
    let caught: unknown;
    try {
      circuitBreaker(options as never);
    } catch (error) {
      caught = error;
    }
    expect(isOncelyError(caught, 'invalid_option')).toBe(true);
    expect((caught as Error).message).toContain(field);
  });
});
