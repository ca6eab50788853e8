export { DEFAULT_JOURNAL_PREFIX, type RedisJournal, type RedisJournalOptions, redisJournal } from './journal/redis-journal.js';
export type { ReplicaWait } from './replication/replica-wait.js';
export { type CommandCalls, diffCommandStats, readCommandStats } from './stats/command-stats.js';
export { DEFAULT_PREFIX, type RedisStore, type RedisStoreOptions, redisStore } from './store/redis-store.js';
export type { ConsumerEntrySubject, ConsumerStage, StreamConsumerEvent } from './streams/consumer-events.js';
export { type EntryProblem, type ParsedEntry, parseStreamEntry, toStreamFields } from './streams/stream-entry.js';
// One aggregate-to-partition hash for every broker, so a Redis stream and a NATS subject agree.
export { partitionOf } from '@oncely/core/adapter';
export { type RedisStreamPublisherOptions, redisStreamPublisher } from './streams/stream-publisher.js';
export {
  type RedisStreamConsumer,
  type RedisStreamConsumerOptions,
  redisStreamConsumer,
  type StreamDelivery,
  type StreamBatchHandler,
  type StreamBatchResult,
  type StreamHandler,
} from './streams/stream-consumer.js';
