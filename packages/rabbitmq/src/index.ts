export type { BrokerConsumerEvent } from '@oncely/core/adapter';
export { type RabbitConsumer, type RabbitConsumerOptions, rabbitConsumer, type RabbitDelivery, type RabbitHandler } from './rabbit-consumer.js';
export { type RabbitPublisher, type RabbitPublisherOptions, rabbitPublisher } from './rabbit-publisher.js';
export { ensureRabbitQueues, type RabbitConnection, rabbitBucketQueues, type RabbitQueuesOptions } from './rabbit-queues.js';
