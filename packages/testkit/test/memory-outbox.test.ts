import { describe, expect, it } from 'vitest';
import { manualClock } from '@oncely/core';
import { memoryOutbox, type MemoryTransaction, runOutboxConformance, runOutboxSourceConformance } from '../src/index.js';

const clock = manualClock(Date.UTC(2026, 0, 1));

// The reference outbox the relay tests rely on must itself keep the contract every adapter keeps.
runOutboxSourceConformance({ describe, it, expect }, {
  name: 'memory outbox (manual clock)',
  advanceTime: (ms) => clock.advance(ms),
  createOutbox: async () => {
    const outbox = memoryOutbox({ clock });
    return {
      source: outbox.source,
      enqueue: async (event) => outbox.add(event),
      inspect: async (eventId) => {
        const row = outbox.rows.find((r) => r.event.eventId === eventId);
        return (
          row && {
            published: row.publishedAt !== undefined,
            deadLettered: row.deadLetteredAt !== undefined,
            attempts: row.attempts,
            leaseOwner: row.leaseOwner,
          }
        );
      },
    };
  },
});

runOutboxConformance<MemoryTransaction>({ describe, it, expect }, {
  name: 'memory outbox',
  createOutbox: async () => {
    const outbox = memoryOutbox({ clock });
    // The caller's business table: rows staged in the same memory transactions as the events.
    const rows = new Set<string>();
    return {
      outbox,
      transaction: (work) => outbox.transactions.transaction(work),
      write: async (tx, id) => tx.onCommit(() => rows.add(id)),
      read: async (id) => rows.has(id),
    };
  },
});
