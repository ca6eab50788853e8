import { manualClock, memoryStore } from '@oncely/core';
import { describe, expect, it } from 'vitest';
import { runStoreConformance } from '../src/index.js';

const clock = manualClock(Date.UTC(2026, 0, 1));

runStoreConformance({ describe, it, expect }, {
  name: 'memory store (manual clock)',
  createStore: () => memoryStore({ clock }),
  advanceTime: (ms) => clock.advance(ms),
});

runStoreConformance({ describe, it, expect }, {
  name: 'memory store (system clock)',
  createStore: () => memoryStore(),
  shortLeaseMs: 100,
  numRuns: 20,
});
