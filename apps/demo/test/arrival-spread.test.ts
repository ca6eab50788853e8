import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { peakArrivals } from '../src/scenarios/arrival-spread.js';

/** The definition, by brute force: the fullest window starting at some arrival. */
function peakByDefinition(times: readonly number[], windowMs: number): number {
  return Math.max(0, ...times.map((start) => times.filter((time) => time >= start && time < start + windowMs).length));
}

describe('peak arrivals per window', () => {
  it('equals the brute-force count of the fullest window', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 200 }), fc.integer({ min: 1, max: 1_000 }), (times, window) => {
        expect(peakArrivals(times, window)).toBe(peakByDefinition(times, window));
      }),
    );
  });

  it('is the whole herd when every client arrives within one window, and 1 when they are a window apart', () => {
    expect(peakArrivals([5, 7, 9, 50, 99], 100)).toBe(5);
    expect(peakArrivals([0, 100, 200, 300], 100)).toBe(1);
  });
});
