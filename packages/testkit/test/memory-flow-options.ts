import { type ManualClock, type MemoryFlowTx, type MemoryStore, memoryStore } from '@oncely/core';
import type { FlowConformanceOptions } from '../src/index.js';

/**
 * The flow suite's options for memory stores on `clock`: each store's phase writes land in a list of
 * its own when the phase commits. `wrap` turns the store into a single-bug one.
 */
export function memoryFlowOptions(
  name: string,
  clock: ManualClock,
  wrap: (store: MemoryStore) => MemoryStore = (store) => store,
): FlowConformanceOptions<MemoryStore, MemoryFlowTx> {
  const rows = new WeakMap<MemoryStore, string[]>();
  // The tests of a suite run one after another: the list of the test running now.
  let written: string[] = [];
  return {
    name,
    createStore: () => {
      const store = wrap(memoryStore({ clock }));
      written = [];
      rows.set(store, written);
      return store;
    },
    advanceTime: async (ms) => clock.advance(ms),
    write: (tx, label) => {
      const into = written;
      tx.onCommit(() => into.push(label));
    },
    count: async (store, label) => (rows.get(store) ?? []).filter((row) => row === label).length,
  };
}
