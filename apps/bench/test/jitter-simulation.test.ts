import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffFor, STRATEGIES } from '../src/jitter/backoff-strategies.js';
import { eventQueue } from '../src/jitter/event-queue.js';
import { BROOKER_BOUNDS, runOccExperiment } from '../src/jitter/occ-experiment.js';
import { simulateOcc } from '../src/jitter/occ-simulation.js';
import { seededRandom } from '../src/jitter/seeded-random.js';

const network = { meanMs: 10, sdMs: 2 };

describe('seeded randomness and the event queue', () => {
  it('the same seed gives the same sequence, another seed another one, always in [0, 1)', () => {
    const draw = (seed: number) => Array.from({ length: 50 }, seededRandom(seed).next);
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
    for (const value of draw(7)) {
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
    }
  });

  it('events leave in time order, and events at the same time in the order they came', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), (times) => {
        const queue = eventQueue<number>();
        for (const [index, time] of times.entries()) queue.push(time, index);
        const out: { time: number; event: number }[] = [];
        for (let next = queue.pop(); next; next = queue.pop()) out.push(next);
        const expected = times.map((time, index) => ({ time, event: index })).sort((a, b) => a.time - b.time || a.event - b.event);
        expect(out).toEqual(expected);
      }),
    );
  });
});

describe('backoff schedules', () => {
  it('each schedule stays within its bounds for every attempt', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.integer(), (attempts, seed) => {
        const random = seededRandom(seed);
        const schedules = Object.fromEntries(STRATEGIES.map((s) => [s, backoffFor(s, BROOKER_BOUNDS, random)]));
        for (let n = 1; n <= attempts; n++) {
          const ceiling = Math.min(BROOKER_BOUNDS.capMs, BROOKER_BOUNDS.baseMs * 2 ** n);
          expect(schedules.none!(n)).toBe(0);
          expect(schedules.exponential!(n)).toBe(ceiling);
          const equal = schedules.equal!(n);
          expect(equal).toBeGreaterThanOrEqual(ceiling / 2);
          expect(equal).toBeLessThanOrEqual(ceiling);
          const full = schedules.full!(n);
          expect(full).toBeGreaterThanOrEqual(0);
          expect(full).toBeLessThan(ceiling);
          const decorrelated = schedules.decorrelated!(n);
          expect(decorrelated).toBeGreaterThanOrEqual(BROOKER_BOUNDS.baseMs);
          expect(decorrelated).toBeLessThanOrEqual(BROOKER_BOUNDS.capMs);
        }
      }),
    );
  });
});

describe('the optimistic-concurrency simulation', () => {
  it('is deterministic: one seed, one result; another seed, another result', () => {
    const run = (seed: number) => simulateOcc({ clients: 40, strategy: 'full', seed, bounds: BROOKER_BOUNDS, network });
    expect(run(11)).toEqual(run(11));
    expect(run(11)).not.toEqual(run(12));
  });

  it('every client writes successfully exactly once: calls minus failures equals the clients', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.constantFrom(...STRATEGIES), fc.integer(), (clients, strategy, seed) => {
        const run = simulateOcc({ clients, strategy, seed, bounds: BROOKER_BOUNDS, network });
        expect(run.calls - run.failures).toBe(clients);
        expect(run.completionMs).toBeGreaterThan(0);
      }),
      { numRuns: 60 },
    );
  });

  it("reproduces the article's ordering at 50 clients over 30 seeds", () => {
    const cells = runOccExperiment({ clientCounts: [50], seeds: 30 });
    const at = (strategy: (typeof STRATEGIES)[number]) => cells.find((c) => c.strategy === strategy)!;
    for (const jittered of ['equal', 'full', 'decorrelated'] as const) {
      expect(at(jittered).meanCalls).toBeLessThan(at('none').meanCalls);
      expect(at(jittered).meanCalls).toBeLessThan(at('exponential').meanCalls);
    }
    expect(at('full').meanCalls).toBeLessThan(at('decorrelated').meanCalls);
    expect(at('equal').meanCompletionMs).toBeGreaterThan(at('full').meanCompletionMs);
    expect(at('decorrelated').meanCompletionMs).toBeLessThan(at('full').meanCompletionMs);
    expect(at('exponential').meanCompletionMs).toBeGreaterThan(at('equal').meanCompletionMs);
  });
});
