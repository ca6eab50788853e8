import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replayOdds } from '../../src/store/replay-odds.js';

describe('replayOdds', () => {
  it('a fresh store claims first', () => {
    expect(replayOdds().likely).toBe(false);
  });

  it('whatever came before, 11 replays in a row make replays likely and 11 other calls make them unlikely', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 200 }), fc.boolean(), (history, lastly) => {
        const odds = replayOdds();
        for (const replayed of history) odds.record(replayed);
        for (let i = 0; i < 11; i++) odds.record(lastly);
        expect(odds.likely).toBe(lastly);
      }),
    );
  });
});
