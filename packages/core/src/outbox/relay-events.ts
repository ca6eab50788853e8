import type { OutboxStage } from '../storage/storage-operation.js';

/** Which event of the outbox a relay event is about. `eventId` is for logs, never a metric label. */
export interface RelayEventSubject {
  readonly eventId: string;
  readonly aggregateType: string;
  readonly eventType: string;
  /** The attempt number (1 for the first). */
  readonly attempt: number;
}

/** Where a relay met a storage or wake-up failure: the `OutboxSource` method it called. */
export type RelayStage = OutboxStage;

/** Everything a relay reports through `onEvent`. */
export type RelayEvent = { readonly at: number; readonly relayId: string } & (
  | { readonly type: 'relay_started' }
  | { readonly type: 'relay_stopped'; readonly released: number }
  | (RelayEventSubject & {
      /** The broker acknowledged the event and the outbox recorded it. */
      readonly type: 'outbox_published';
      /** From enqueue (outbox clock) to the mark (relay clock): the publish lag. */
      readonly lagMs: number;
    })
  | (RelayEventSubject & {
      readonly type: 'outbox_publish_failed';
      /** The event is claimable again after this delay (full jitter). */
      readonly retryInMs: number;
      readonly error: unknown;
    })
  | (RelayEventSubject & {
      /** Parked after `maxAttempts`: it holds back the later events of its aggregate until requeued. */
      readonly type: 'outbox_dead_lettered';
      readonly error: unknown;
    })
  | {
      /** Another relay took these events over after this relay's lease lapsed: it will publish them. */
      readonly type: 'outbox_lease_lost';
      readonly stage: Extract<RelayStage, 'reschedule' | 'deadLetter' | 'release'>;
      readonly count: number;
    }
  | {
      /** The outbox gauges, read every `statsIntervalMs`. */
      readonly type: 'outbox_stats';
      readonly unpublished: number;
      readonly oldestUnpublishedAgeMs: number;
      readonly deadLettered: number;
    }
  | { readonly type: 'outbox_purged'; readonly count: number }
  | {
      /** A storage or wake-up failure; the relay keeps running and retries after `retryInMs`. */
      readonly type: 'relay_error';
      readonly stage: RelayStage;
      readonly error: unknown;
      readonly retryInMs: number;
    }
);
