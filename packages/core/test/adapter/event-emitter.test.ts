import { describe, expect, it } from 'vitest';
import { eventEmitter } from '../../src/adapter.js';
import { manualClock } from '../../src/index.js';

type Event = { readonly at: number; readonly source: string } & ({ readonly type: 'started' } | { readonly type: 'failed'; readonly error: unknown });

describe('eventEmitter: the safe emitter every adapter shares', () => {
  it('stamps each event with the injected clock and adds the fixed fields', async () => {
    const clock = manualClock(1_000);
    const seen: Event[] = [];
    const emit = eventEmitter<Event, 'source'>((event) => seen.push(event), clock, { source: 'relay-1' });
    emit({ type: 'started' });
    await clock.advance(250);
    emit({ type: 'failed', error: 'x' });
    expect(seen).toEqual([
      { type: 'started', at: 1_000, source: 'relay-1' },
      { type: 'failed', error: 'x', at: 1_250, source: 'relay-1' },
    ]);
  });

  it('a listener that throws changes nothing, and without a listener the clock is never read', () => {
    const emit = eventEmitter<Event, 'source'>(
      () => {
        throw new Error('metrics sink down');
      },
      manualClock(0),
      { source: 's' },
    );
    expect(() => emit({ type: 'started' })).not.toThrow();
    let reads = 0;
    const quiet = eventEmitter<Event, 'source'>(undefined, { now: () => ++reads }, { source: 's' });
    quiet({ type: 'started' });
    expect(reads).toBe(0);
  });
});
