import { assertIdentifier } from '../outbox/identifier.js';

/** Which consumer is handling which event. */
export interface InboxInput {
  /** The consumer's stable name, e.g. `billing`: each consumer deduplicates on its own. */
  readonly consumer: string;
  /** The event's `eventId`, as the publisher carried it. */
  readonly eventId: string;
}

/** `processed`: this call applied the event. `duplicate`: an earlier delivery already had; nothing ran. */
export type InboxOutcome = 'processed' | 'duplicate';

/**
 * An idempotent consumer's inbox (processed-messages table), implemented by each adapter. `process`
 * records `(consumer, eventId)` first, in the consumer's own transaction `tx`, and runs `fn` in that
 * transaction only if the pair was new; the record and `fn`'s writes commit or roll back together.
 * A concurrent duplicate waits on the unique key and then resolves `duplicate`. Deliveries stay
 * at-least-once; the effect on the state `tx` covers is effectively once.
 */
export interface Inbox<Tx> {
  process(tx: Tx, input: InboxInput, fn: (tx: Tx) => Promise<unknown>): Promise<InboxOutcome>;
}

/**
 * What an inbox reports through `onEvent`: a duplicate detected, per consumer (the consumer name is a
 * fine metric label; `eventId` is for logs only). Applied events are not reported here: the commit
 * that makes them count is the caller's.
 */
export interface InboxEvent {
  readonly type: 'inbox_duplicate';
  readonly at: number;
  readonly consumer: string;
  readonly eventId: string;
}

/** Validates an {@link InboxInput} before any storage is touched; throws an `invalid_event` error. */
export function assertInboxInput(input: InboxInput): void {
  assertIdentifier('invalid_event', 'consumer', input?.consumer);
  assertIdentifier('invalid_event', 'eventId', input.eventId);
}
