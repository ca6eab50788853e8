import { randomUUID } from 'node:crypto';
import type { BrokerConsumerEvent } from '@oncely/core/adapter';
import type { InboxOutcome, NewOutboxEvent, OutboxEvent } from '@oncely/core/outbox';

let sequence = 0;
/** An outbox event as a relay would hand it to the publisher. */
export function eventOf(aggregateId: string, aggregateSeq: number, extra: Partial<OutboxEvent> = {}): OutboxEvent {
  sequence += 1;
  return {
    eventId: `evt-${sequence}-${randomUUID()}`,
    aggregateType: 'account',
    aggregateId,
    aggregateSeq,
    eventType: 'account.credited.v1',
    payload: { n: aggregateSeq },
    createdAt: new Date(Date.UTC(2026, 0, 1, 12, 0, 0, sequence % 1000)),
    ...extra,
  };
}

/** A credit of `amount` to `account`: the event every pipeline test enqueues. */
export const credit = (account: string, amount = 1): NewOutboxEvent => ({
  aggregateType: 'account',
  aggregateId: account,
  eventType: 'account.credited.v1',
  payload: { amount },
});

/**
 * A consumer's state kept in memory with its own inbox: what it applied, in order. `fail` lets a
 * test make the handler throw for chosen deliveries.
 */
export function ledger(fail: (event: OutboxEvent) => boolean = () => false) {
  const inbox = new Set<string>();
  const applied: OutboxEvent[] = [];
  // Takes a broker's delivery second, as the handlers it stands in for do, and ignores it.
  const handle = async (event: OutboxEvent, _delivery?: unknown): Promise<InboxOutcome> => {
    if (fail(event)) throw new Error(`handler refused ${event.eventId}`);
    if (inbox.has(event.eventId)) return 'duplicate';
    inbox.add(event.eventId);
    applied.push(event);
    return 'processed';
  };
  return { inbox, applied, handle };
}

/** Collects a consumer's events. */
export function recorder<Event = BrokerConsumerEvent>() {
  const events: Event[] = [];
  return { events, onEvent: (event: Event) => events.push(event) };
}
