import type { OutboxEvent } from './outbox-event.js';

/** What happened to one event of a batch. */
export type PublishOutcome = { readonly kind: 'published' } | { readonly kind: 'failed'; readonly error: unknown };

/**
 * Sends events to a broker. `published` must mean the broker acknowledged the event (durably, as far
 * as the broker promises): the relay marks it published on that word alone. Each event must carry its
 * `eventId` so consumers can deduplicate: a relay that crashes between the acknowledgement and the mark
 * publishes the event again (at-least-once delivery).
 */
export interface Publisher {
  /** Publisher name used in events, e.g. `redis-streams`. */
  readonly name: string;
  /**
   * Publishes a batch and resolves with one outcome per event, in the same order. Events of one
   * aggregate come in `aggregateSeq` order: send them in that order, and once one fails, send none
   * of the later events of its aggregate (answer them failed), or consumers see them out of order.
   * May throw instead: every event of the batch then counts as failed.
   * `signal` aborts when the publish timeout passes or a relay stop gives up waiting.
   */
  publish(events: readonly OutboxEvent[], signal: AbortSignal): Promise<readonly PublishOutcome[]>;
}
