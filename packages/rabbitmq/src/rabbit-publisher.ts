import { OncelyError } from '@oncely/core';
import { integerOption, invalidOption, type OutboxEvent, type PublishOutcome, type Publisher, partitionOf, toBrokerMessage } from '@oncely/core/adapter';
import type { ConfirmChannel, Message } from 'amqplib';
import type { RabbitConnection } from './rabbit-queues.js';

/** Options of {@link rabbitPublisher}. */
export interface RabbitPublisherOptions {
  /** Where confirm channels are opened; the publisher closes only its own channel. */
  readonly connection: RabbitConnection;
  /**
   * The queue, or a function choosing one per event. With `buckets`, the queue is `<queue>.<bucket>`
   * where the bucket is `partitionOf(aggregateId, buckets)`: an aggregate's events share a queue, so
   * they are consumed in order. Messages go through the default exchange, routed by queue name.
   */
  readonly queue: string | ((event: OutboxEvent) => string);
  readonly buckets?: number;
  /** The broker's `max_message_size` (default 134 217 728, RabbitMQ's own default): larger events fail before sending. */
  readonly maxMessageBytes?: number;
}

/** A RabbitMQ {@link Publisher}: see {@link rabbitPublisher}. Close it when the relay has stopped. */
export interface RabbitPublisher extends Publisher {
  close(): Promise<void>;
}

/**
 * A {@link Publisher} over a confirm channel: each event is a persistent message (`messageId` = event
 * id, the event's headers as AMQP headers) published `mandatory` to its queue, and counts as
 * published only when the broker confirmed it (for a quorum queue: written by a majority). A message
 * no queue takes (a missing queue) comes back as a return before its confirm and fails, as does a
 * nack, a closed channel, a header AMQP cannot carry or an event over `maxMessageBytes`; a failed
 * event stays in the outbox. Delivery is at-least-once: consumers deduplicate with an inbox.
 */
export function rabbitPublisher(options: RabbitPublisherOptions): RabbitPublisher {
  const { connection, queue } = options;
  if (!connection || typeof connection.createConfirmChannel !== 'function') {
    throw invalidOption('oncely/rabbitmq', 'rabbitPublisher needs an amqplib connection (ChannelModel)');
  }
  if (typeof queue !== 'function' && (typeof queue !== 'string' || queue.length === 0)) {
    throw invalidOption('oncely/rabbitmq', 'queue must be a non-empty string or a function of the event');
  }
  const buckets = options.buckets === undefined ? undefined : integerOption('oncely/rabbitmq: buckets', options.buckets);
  const maxBytes = integerOption('oncely/rabbitmq: maxMessageBytes', options.maxMessageBytes ?? 134_217_728);
  const base = typeof queue === 'string' ? () => queue : queue;
  const queueOf = buckets === undefined ? base : (event: OutboxEvent) => `${base(event)}.${partitionOf(event.aggregateId, buckets)}`;

  let channel: Promise<ConfirmChannel> | undefined;
  // Event ids the broker returned as unroutable; their confirm follows the return.
  const returned = new Set<string>();

  /** The open confirm channel, reopened after the broker closed the last one (an error, a restart). */
  function open(): Promise<ConfirmChannel> {
    if (channel) return channel;
    const opening = connection.createConfirmChannel().then((created) => {
      const forget = () => {
        if (channel === opening) channel = undefined;
      };
      created.on('close', forget);
      created.on('error', forget);
      created.on('return', (message: Message) => {
        if (typeof message.properties.messageId === 'string') returned.add(message.properties.messageId);
      });
      return created;
    });
    channel = opening;
    opening.catch(() => {
      if (channel === opening) channel = undefined;
    });
    return opening;
  }

  async function publishOne(event: OutboxEvent, signal: AbortSignal, aborted: Promise<never>): Promise<PublishOutcome> {
    try {
      const target = queueOf(event);
      const message = toBrokerMessage(event, maxBytes);
      signal.throwIfAborted();
      const confirm = await open();
      // Given up on while the channel opened: nothing is sent.
      signal.throwIfAborted();
      const confirmed = new Promise<void>((resolve, reject) => {
        confirm.publish(
          '',
          target,
          Buffer.from(message.body.buffer, message.body.byteOffset, message.body.byteLength),
          {
            persistent: true,
            mandatory: true,
            messageId: event.eventId,
            type: event.eventType,
            contentType: 'application/json',
            timestamp: Math.floor(event.createdAt.getTime() / 1000),
            headers: { ...message.headers },
          },
          (error: unknown) => {
            if (returned.delete(event.eventId)) reject(new OncelyError('invalid_state', `oncely/rabbitmq: no queue ${target} took event ${event.eventId}`));
            else if (error) reject(error instanceof Error ? error : new Error(`oncely/rabbitmq: the broker nacked event ${event.eventId}`));
            else resolve();
          },
        );
      });
      await Promise.race([confirmed, aborted]);
      return { kind: 'published' };
    } catch (error) {
      return { kind: 'failed', error };
    }
  }

  return {
    name: 'rabbitmq',
    async publish(events, signal) {
      // One abort listener for the batch: one per event passed Node's 10 per signal, a
      // MaxListenersExceededWarning on every batch of more than 10 (seen in the connection storm).
      let onAbort!: () => void;
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(signal.reason);
      });
      aborted.catch(() => undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        // Each event of a batch is of another aggregate: they may be in flight together.
        return await Promise.all(events.map((event) => publishOne(event, signal, aborted)));
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    },
    async close() {
      const current = channel;
      channel = undefined;
      await current?.then((open) => open.close()).catch(() => undefined);
    },
  };
}
