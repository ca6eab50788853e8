import { randomUUID } from 'node:crypto';
import type { BrokerConsumerEvent } from '@oncely/core/adapter';
import type { OutboxEvent } from '@oncely/core/outbox';

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

/** A consumer's state kept in memory with its own inbox: what it applied, in order. */
export function ledger(fail: (event: OutboxEvent) => boolean = () => false) {
  const inbox = new Set<string>();
  const applied: OutboxEvent[] = [];
  const handle = async (event: OutboxEvent): Promise<'processed' | 'duplicate'> => {
    if (fail(event)) throw new Error(`handler refused ${event.eventId}`);
    if (inbox.has(event.eventId)) return 'duplicate';
    inbox.add(event.eventId);
    applied.push(event);
    return 'processed';
  };
  return { inbox, applied, handle };
}

/** Collects a consumer's events. */
export function recorder() {
  const events: BrokerConsumerEvent[] = [];
  return { events, onEvent: (event: BrokerConsumerEvent) => events.push(event) };
}

/** Waits until `check` holds (state, not time, is what the tests assert); fails after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not reached in ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
