import { describe, expect, it } from 'vitest';
import { manualClock } from '@oncely/core';
import { memoryJournal } from '@oncely/core/journal';
import { runJournalConformance } from '../src/index.js';

const clock = manualClock(Date.UTC(2026, 0, 1));

runJournalConformance({ describe, it, expect }, {
  name: 'memory journal (manual clock)',
  createJournal: () => memoryJournal({ clock }),
  advanceTime: (ms) => clock.advance(ms),
});

runJournalConformance({ describe, it, expect }, {
  name: 'memory journal (system clock)',
  createJournal: () => memoryJournal(),
  numRuns: 10,
});
