import type { ConsumerStage } from '@oncely/core';
import type { EntryProblem } from './stream-entry.js';

/** Where a stream consumer met a Redis failure: the shared consumer stages of `@oncely/core`. */
export type { ConsumerStage };

/** One stream entry an event is about. `eventId` and `entryId` are for logs, never metric labels. */
export interface ConsumerEntrySubject {
  readonly stream: string;
  readonly entryId: string;
}

/** Everything a {@link RedisStreamConsumer} reports through `onEvent`. */
export type StreamConsumerEvent = { readonly at: number; readonly group: string; readonly consumer: string } & (
  | { readonly type: 'consumer_started' }
  | { readonly type: 'consumer_stopped' }
  | (ConsumerEntrySubject & {
      /** The handler applied the event (its inbox recorded it), then the entry was acknowledged. */
      readonly type: 'stream_processed';
      readonly eventId: string;
      readonly eventType: string;
    })
  | (ConsumerEntrySubject & {
      /** The handler's inbox had already seen this event id: acknowledged, not applied again. */
      readonly type: 'stream_duplicate';
      readonly eventId: string;
      readonly eventType: string;
    })
  | (ConsumerEntrySubject & {
      /** The handler threw: the entry stays pending and is retried before later entries of its stream. */
      readonly type: 'stream_handler_failed';
      readonly eventId: string;
      readonly attempt: number;
      readonly retryInMs: number;
      readonly error: unknown;
    })
  | (ConsumerEntrySubject & {
      /** Not an oncely event (or trimmed away): acknowledged and skipped, with its fields for the operator. */
      readonly type: 'stream_malformed';
      readonly problem: EntryProblem;
      readonly fields: Readonly<Record<string, string>>;
    })
  | {
      /** Entries another consumer left pending longer than `claimIdleMs`, taken over with XAUTOCLAIM. */
      readonly type: 'stream_reclaimed';
      readonly stream: string;
      readonly count: number;
    }
  | {
      /** A Redis failure; the consumer keeps going after `retryInMs`. */
      readonly type: 'consumer_error';
      readonly stage: ConsumerStage;
      readonly error: unknown;
      readonly retryInMs: number;
    }
);
