import type { OutboxEvent, PublishOutcome, Publisher } from '@oncely/core/outbox';
import type { Database } from '../database/database.js';
import { PUBLISH_MESSAGE } from '../database/sql.js';
import type { ArmedFaults } from '../faults/armed-faults.js';
import { crashNow } from '../faults/crash.js';

/**
 * Publishes outbox events to the demo's stand-in broker, a queue table: once the insert commits, the
 * broker has acknowledged the batch. With the `relay-after-publish` fault armed, the process is
 * killed right after that acknowledgement and before the relay marks the events published.
 */
export function queuePublisher(database: Database, faults: ArmedFaults, beforeCrash: () => Promise<void>): Publisher {
  return {
    name: 'demo-queue',
    async publish(events: readonly OutboxEvent[]): Promise<readonly PublishOutcome[]> {
      await database.transaction(async (tx) => {
        for (const event of events) {
          await tx.query(PUBLISH_MESSAGE, [event.eventId, event.eventType, JSON.stringify(event.payload)]);
        }
      });
      if (faults.take('relay-after-publish')) {
        await beforeCrash();
        crashNow('relay-after-publish');
      }
      return events.map(() => ({ kind: 'published' }) as const);
    },
  };
}
