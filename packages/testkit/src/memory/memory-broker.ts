import type { OutboxEvent, PublishOutcome, Publisher } from '@oncely/core/adapter';

/** What a {@link MemoryBroker} publisher does with one event: the broker acknowledges it, or the publish fails. */
export type Verdict = 'ack' | 'fail';

/** A broker for relay tests: `log` holds every acknowledged publish in order, duplicates included. */
export interface MemoryBroker {
  readonly log: OutboxEvent[];
  /** A publisher into this broker; `decide` picks each event's fate (default: acknowledge). */
  publisher(decide?: (event: OutboxEvent) => Verdict): Publisher;
}

/** Creates an empty {@link MemoryBroker}: `createRelay({ source, publisher: broker.publisher() })`. */
export function memoryBroker(): MemoryBroker {
  const log: OutboxEvent[] = [];
  return {
    log,
    publisher(decide = () => 'ack') {
      return {
        name: 'memory',
        async publish(events) {
          // As the Publisher contract asks: after a failure, nothing more of that aggregate in this batch.
          const failed = new Set<string>();
          return events.map((event): PublishOutcome => {
            const aggregate = JSON.stringify([event.aggregateType, event.aggregateId]);
            if (failed.has(aggregate)) return { kind: 'failed', error: new Error(`an earlier event of ${event.aggregateId} failed`) };
            if (decide(event) === 'fail') {
              failed.add(aggregate);
              return { kind: 'failed', error: new Error(`broker refused ${event.eventId}`) };
            }
            log.push(event);
            return { kind: 'published' };
          });
        },
      };
    },
  };
}

/**
 * What an idempotent consumer applies from a delivery log: each event id once (an inbox), in
 * delivery order. Returns the applied sequence numbers per aggregate.
 */
export function applyWithInbox(log: readonly OutboxEvent[]): Map<string, number[]> {
  const inbox = new Set<string>();
  const applied = new Map<string, number[]>();
  for (const event of log) {
    if (inbox.has(event.eventId)) continue;
    inbox.add(event.eventId);
    const key = `${event.aggregateType}/${event.aggregateId}`;
    applied.set(key, [...(applied.get(key) ?? []), event.aggregateSeq]);
  }
  return applied;
}
