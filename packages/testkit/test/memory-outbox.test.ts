import { describe, expect, it } from 'vitest';
import { manualClock } from '@oncely/core';
// The reference outbox is a test helper of core's relay tests; it must keep the same contract.
import { memoryOutbox } from '../../core/test/outbox/memory-outbox.js';
import { runOutboxSourceConformance } from '../src/index.js';

const clock = manualClock(Date.UTC(2026, 0, 1));

// The test outbox the relay tests rely on must itself keep the contract every adapter keeps.
runOutboxSourceConformance({ describe, it, expect }, {
  name: 'memory outbox (manual clock)',
  advanceTime: (ms) => clock.advance(ms),
  createOutbox: async () => {
    const outbox = memoryOutbox(clock);
    return {
      source: outbox.source,
      enqueue: async (event) => outbox.enqueue(event),
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
