import { describe, expect, it } from 'vitest';
import { type MemoryTransaction, memoryInbox, runInboxConformance } from '../src/index.js';

runInboxConformance<MemoryTransaction>({ describe, it, expect }, {
  name: 'memory inbox',
  // The memory inbox judges record ages by its own clock, which the suite moves itself.
  advanceTime: async () => undefined,
  createInbox: async ({ onEvent, clock }) => {
    const inbox = memoryInbox({ clock, onEvent });
    const applied = new Map<string, number>();
    return {
      inbox,
      transaction: (work) => inbox.transactions.transaction(work),
      apply: async (tx, id) => tx.onCommit(() => applied.set(id, (applied.get(id) ?? 0) + 1)),
      applied: async (id) => applied.get(id) ?? 0,
    };
  },
});
