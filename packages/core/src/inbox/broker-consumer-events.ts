import type { MessageProblem } from '../outbox/broker-message.js';
import type { ConsumerStage } from '../storage/storage-operation.js';

/** The message an event of a broker consumer is about. `eventId` and `deliveryId` are for logs, never metric labels. */
export interface BrokerDeliverySubject {
  /** Where the message was read from: a NATS subject, a RabbitMQ queue. */
  readonly source: string;
  /** The broker's id of this delivery: a stream sequence, a delivery tag. */
  readonly deliveryId: string;
  /** 1 for the first delivery of the message. */
  readonly delivery: number;
}

/** Everything a NATS JetStream or RabbitMQ consumer reports through `onEvent`. */
export type BrokerConsumerEvent = { readonly at: number; readonly consumer: string } & (
  | { readonly type: 'consumer_started' }
  | { readonly type: 'consumer_stopped' }
  | (BrokerDeliverySubject & {
      /** The handler applied the event (its inbox recorded it), then the message was acknowledged. */
      readonly type: 'message_processed';
      readonly eventId: string;
      readonly eventType: string;
    })
  | (BrokerDeliverySubject & {
      /** The handler's inbox had already seen this event id: acknowledged, not applied again. */
      readonly type: 'message_duplicate';
      readonly eventId: string;
      readonly eventType: string;
    })
  | (BrokerDeliverySubject & {
      /** The handler threw: the message is redelivered after `retryInMs`, before any later one of its source. */
      readonly type: 'message_handler_failed';
      readonly eventId: string;
      readonly retryInMs: number;
      readonly error: unknown;
    })
  | (BrokerDeliverySubject & {
      /** Delivered `maxDeliver` times without being applied: parked on the dead-letter path, then acknowledged. */
      readonly type: 'message_dead_lettered';
      readonly eventId: string;
      readonly error: unknown;
    })
  | (BrokerDeliverySubject & {
      /** Not an oncely event: parked on the dead-letter path, never handed to the handler. */
      readonly type: 'message_malformed';
      readonly problem: MessageProblem;
    })
  | {
      /** A broker failure; the consumer keeps going after `retryInMs`. */
      readonly type: 'consumer_error';
      readonly stage: ConsumerStage;
      readonly error: unknown;
      readonly retryInMs: number;
    }
);
