import { type MemoryFlowTx, type MemoryStore, manualClock, memoryStore } from '@oncely/core';
import { describe, expect, it } from 'vitest';
import { runFlowConformance } from '../src/index.js';

const clock = manualClock(Date.UTC(2026, 0, 1));
/** The committed business writes of each store: what `onCommit` ran. */
const rows = new WeakMap<MemoryStore, string[]>();

runFlowConformance<MemoryStore, MemoryFlowTx>({ describe, it, expect }, {
  name: 'memory store (manual clock)',
  createStore: () => {
    const store = memoryStore({ clock });
    const committed: string[] = [];
    rows.set(store, committed);
    written = committed;
    return store;
  },
  advanceTime: async (ms) => clock.advance(ms),
  write: (tx, label) => {
    const into = written;
    tx.onCommit(() => into.push(label));
  },
  count: async (store, label) => (rows.get(store) ?? []).filter((row) => row === label).length,
});

/** The list of the test's store: tests of one file run one after another. */
let written: string[] = [];
