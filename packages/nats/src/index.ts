export type { BrokerConsumerEvent } from '@oncely/core/adapter';
export { type NatsConsumer, type NatsConsumerOptions, natsConsumer, type NatsDelivery, type NatsHandler } from './nats-consumer.js';
export { type NatsPublisherOptions, natsPublisher } from './nats-publisher.js';
export { ensureNatsStream, natsBucketSubjects, type NatsStreamOptions } from './nats-stream.js';
