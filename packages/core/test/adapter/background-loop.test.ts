import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backgroundLoop, type BackgroundLoopOptions } from '../../src/adapter.js';
import { isOncelyError, manualClock } from '../../src/index.js';

const backoff = { baseMs: 100, capMs: 10_000 };
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

function setup(overrides: Partial<BackgroundLoopOptions> = {}) {
  const clock = manualClock(0);
  const log: string[] = [];
  const failures: [unknown, number][] = [];
  const loop = backgroundLoop({
    label: 'oncely/test: poller p1',
    kind: 'poller',
    clock,
    random: () => 1,
    backoff,
    beforeRounds: async () => void log.push('before'),
    round: async () => {
      log.push('round');
      await clock.sleep(50);
    },
    onFailure: (error, retryInMs) => failures.push([error, retryInMs]),
    onStop: () => log.push('onStop'),
    afterRounds: async () => void log.push(`after:${loop.status}`),
    ...overrides,
  });
  return { clock, log, failures, loop };
}

const codeOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return isOncelyError(error) ? `${error.code}: ${error.message}` : String(error);
  }
  return 'no error';
};

describe('backgroundLoop: the run/stop loop shared by the relay and broker consumers', () => {
  it('runs rounds until stopped; the round in flight finishes; afterRounds sees the stopped status', async () => {
    const { clock, log, loop } = setup();
    expect(loop.status).toBe('idle');
    await loop.start();
    expect(loop.status).toBe('running');
    await clock.advance(120);
    const stopped = loop.stop();
    expect(loop.status).toBe('stopping');
    await clock.advance(50);
    await stopped;
    expect(loop.status).toBe('stopped');
    expect(log).toEqual(['before', 'round', 'round', 'round', 'onStop', 'after:stopped']);
  });

  it('start needs an idle loop (invalid_state, thrown at once); an idle loop stops without running', async () => {
    const { loop, log } = setup();
    void loop.start();
    expect(codeOf(() => loop.start())).toBe('invalid_state: oncely/test: poller p1 is running; start() needs an idle poller');
    expect(codeOf(() => loop.assertIdle('runOnce'))).toBe('invalid_state: oncely/test: poller p1 is running; runOnce() needs an idle poller');
    const idle = setup();
    await idle.loop.stop();
    expect([idle.loop.status, idle.log]).toEqual(['stopped', []]);
    expect(codeOf(() => idle.loop.start())).toMatch(/^invalid_state: .* is stopped/);
    void loop.stop();
    expect(log[0]).toBe('before');
  });

  it('a failed round is reported with full-jitter backoff, which grows with failures in a row and resets after a good round', async () => {
    const script = ['fail', 'fail', 'fail', 'ok', 'fail'];
    const { clock, failures, loop } = setup({
      round: async () => {
        const next = script.shift() ?? 'ok';
        if (next === 'fail') throw new Error(`failure ${5 - script.length}`);
        await clock.sleep(1_000);
      },
    });
    await loop.start();
    for (let i = 0; i < 20; i++) await clock.advance(500);
    const stopped = loop.stop();
    await clock.advance(1_000);
    await stopped;
    expect(failures.map(([, retryInMs]) => retryInMs)).toEqual([100, 200, 400, 100]);
    expect(failures.map(([error]) => (error as Error).message)).toEqual(['failure 1', 'failure 2', 'failure 3', 'failure 5']);
  });

  it('stop ends a pause at once, and a round failing because of the stop is not reported', async () => {
    let fail!: (error: Error) => void;
    const { failures, loop, log } = setup({
      round: () => new Promise<void>((_, reject) => (fail = reject)),
      onStop: () => fail(new Error('connection closed by stop()')),
    });
    await loop.start();
    await tick();
    await loop.stop();
    expect(failures).toEqual([]);
    expect(log).toEqual(['before', 'after:stopped']);
  });

  it('prepare runs before any round; when it fails the loop is stopped, start rejects and nothing runs', async () => {
    const boom = new Error('cannot create the consumer group');
    const { loop, log } = setup();
    const started = loop.start(async () => {
      log.push('prepare');
      throw boom;
    });
    await expect(started).rejects.toBe(boom);
    expect(loop.status).toBe('stopped');
    await loop.stop();
    expect(log).toEqual(['prepare']);
  });

  it('a stop during prepare runs no round and still ends with afterRounds', async () => {
    let release!: () => void;
    const { loop, log } = setup();
    const started = loop.start(() => new Promise<void>((resolve) => (release = resolve)));
    const stopped = loop.stop();
    release();
    await started;
    await stopped;
    expect([loop.status, log]).toEqual(['stopped', ['onStop', 'after:stopped']]);
  });

  it('an unusable backoff is refused when the loop is created', () => {
    expect(codeOf(() => setup({ backoff: { baseMs: 10, capMs: 1 } }))).toMatch(/^invalid_option/);
  });

  it('property: every reported pause is within [0, min(cap, base * 2^(failures in a row - 1))]', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }), fc.double({ min: 0, max: 0.999_999, noNaN: true }), async (outcomes, r) => {
        const rounds = [...outcomes];
        let streak = 0;
        const bounds: number[] = [];
        const { clock, failures, loop } = setup({
          random: () => r,
          round: async () => {
            const fails = rounds.shift() ?? false;
            if (!fails) {
              streak = 0;
              return clock.sleep(backoff.capMs);
            }
            streak += 1;
            bounds.push(Math.min(backoff.capMs, backoff.baseMs * 2 ** (streak - 1)));
            throw new Error('down');
          },
        });
        await loop.start();
        for (let i = 0; i < outcomes.length * 2 + 2; i++) await clock.advance(backoff.capMs);
        const stopped = loop.stop();
        await clock.advance(backoff.capMs);
        await stopped;
        expect(failures.length).toBe(bounds.length);
        failures.forEach(([, retryInMs], index) => {
          expect(retryInMs).toBeGreaterThanOrEqual(0);
          expect(retryInMs).toBeLessThanOrEqual(bounds[index]!);
        });
      }),
      { numRuns: 40 },
    );
  });
});
