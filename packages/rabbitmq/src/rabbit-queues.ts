import { integerOption } from '@oncely/core/adapter';
import type { Channel, ConfirmChannel } from 'amqplib';

/** What the publisher and consumer open channels on: an amqplib `ChannelModel`, or one with `recovery` (reconnecting). */
export interface RabbitConnection {
  createChannel(): Promise<Channel>;
  createConfirmChannel(): Promise<ConfirmChannel>;
}

/** Options of {@link ensureRabbitQueues}. */
export interface RabbitQueuesOptions {
  /** The queues: `<queue>.0` … `<queue>.<buckets - 1>` with `buckets`, else `queue` itself. */
  readonly queue: string;
  readonly buckets?: number;
  /** Where the broker dead-letters rejected and over-delivered messages: a quorum queue of its own. */
  readonly deadLetterQueue: string;
  /** Deliveries after which the broker dead-letters a message whose consumers kept dying (quorum `x-delivery-limit`, default 10). */
  readonly deliveryLimit?: number;
}

/** The queue names a `rabbitPublisher({ queue, buckets })` routes to. */
export function rabbitBucketQueues(queue: string, buckets: number | undefined): string[] {
  if (buckets === undefined) return [queue];
  return Array.from({ length: integerOption('oncely/rabbitmq: buckets', buckets) }, (_, bucket) => `${queue}.${bucket}`);
}

/**
 * Declares durable quorum queues for outbox events (replicated, persistent, with a delivery limit),
 * each with a single active consumer so one consumer at a time applies a bucket's aggregates in
 * order, dead-lettering to `deadLetterQueue`. Idempotent for the same arguments; publishers never
 * declare queues, so an event routed to a missing queue fails and stays in the outbox.
 */
export async function ensureRabbitQueues(connection: RabbitConnection, options: RabbitQueuesOptions): Promise<string[]> {
  const deliveryLimit = integerOption('oncely/rabbitmq: deliveryLimit', options.deliveryLimit ?? 10);
  const queues = rabbitBucketQueues(options.queue, options.buckets);
  const channel = await connection.createChannel();
  try {
    await channel.assertQueue(options.deadLetterQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    for (const queue of queues) {
      await channel.assertQueue(queue, {
        durable: true,
        arguments: {
          'x-queue-type': 'quorum',
          'x-single-active-consumer': true,
          'x-delivery-limit': deliveryLimit,
          'x-dead-letter-exchange': '',
          'x-dead-letter-routing-key': options.deadLetterQueue,
        },
      });
    }
  } finally {
    await channel.close().catch(() => undefined);
  }
  return queues;
}
