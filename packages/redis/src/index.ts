export { DEFAULT_JOURNAL_PREFIX, type RedisJournal, type RedisJournalOptions, redisJournal } from './journal/redis-journal.js';
export type { ReplicaWait } from './replication/replica-wait.js';
export { type CommandCalls, diffCommandStats, readCommandStats } from './stats/command-stats.js';
export { DEFAULT_PREFIX, type RedisStore, type RedisStoreOptions, redisStore } from './store/redis-store.js';
export type { ConsumerEntrySubject, ConsumerStage, StreamConsumerEvent } from './streams/consumer-events.js';
export { type EntryProblem, type ParsedEntry, parseStreamEntry, toStreamFields } from './streams/stream-entry.js';
export { partitionOf, type RedisStreamPublisherOptions, redisStreamPublisher } from './streams/stream-publisher.js';
export {
  type RedisStreamConsumer,
  type RedisStreamConsumerOptions,
  redisStreamConsumer,
  type StreamDelivery,
  type StreamBatchHandler,
  type StreamBatchResult,
  type StreamHandler,
} from './streams/stream-consumer.js';
