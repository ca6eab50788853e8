import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { BrokerConsumerEvent } from '@oncely/core/adapter';
import { ensureNatsStream, natsBucketSubjects, natsConsumer, natsPublisher } from '@oncely/nats';
import { ensureRabbitQueues, type RabbitConnection, rabbitConsumer, rabbitPublisher } from '@oncely/rabbitmq';
import { consumersOf } from './consumer-set.js';
import type { Transport } from './outbox-pipeline.js';

/** The consumers' events, of which the bench counts the failures. */
const failuresTo =
  (onFailure: Parameters<Transport['startConsumers']>[1]) =>
  (event: BrokerConsumerEvent): void => {
    if (event.type === 'consumer_error' || event.type === 'message_handler_failed') onFailure(event);
  };

/** NATS JetStream: a stream of its own, `buckets` subjects routed by aggregate, one durable pull consumer each. */
export async function natsTransport(nc: NatsConnection, runId: string, buckets: number): Promise<Transport & { remove(): Promise<void> }> {
  const stream = runId.replace(/\W/g, '_');
  await ensureNatsStream(nc, { name: stream, subjects: [`${stream}.ev.*`, `${stream}.dead`] });
  return {
    publisher: natsPublisher({ connection: nc, subject: `${stream}.ev`, buckets, stream }),
    async startConsumers(handle, onFailure) {
      const consumers = natsBucketSubjects(`${stream}.ev`, buckets).map((subject, bucket) =>
        natsConsumer({
          connection: nc,
          stream,
          durable: `billing-${bucket}`,
          filterSubject: subject,
          deadLetterSubject: `${stream}.dead`,
          handle,
          onEvent: failuresTo(onFailure),
        }),
      );
      return consumersOf(consumers);
    },
    async remove() {
      await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    },
  };
}

/** RabbitMQ: `buckets` quorum queues routed by aggregate (single active consumer), one consumer each. */
export async function rabbitTransport(connection: RabbitConnection, runId: string, buckets: number): Promise<Transport & { remove(): Promise<void> }> {
  const queue = `bench.${runId}`;
  const queues = await ensureRabbitQueues(connection, { queue, buckets, deadLetterQueue: `${queue}.dead` });
  const publisher = rabbitPublisher({ connection, queue, buckets });
  return {
    publisher,
    async startConsumers(handle, onFailure) {
      const consumers = queues.map((name) =>
        rabbitConsumer({
          connection,
          queue: name,
          consumer: 'bench',
          idleMs: 100,
          handle,
          onEvent: failuresTo(onFailure),
        }),
      );
      return consumersOf(consumers);
    },
    async remove() {
      await publisher.close();
      const channel = await connection.createChannel();
      for (const name of [...queues, `${queue}.dead`]) await channel.deleteQueue(name).catch(() => undefined);
      await channel.close().catch(() => undefined);
    },
  };
}
