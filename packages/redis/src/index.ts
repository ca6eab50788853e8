export { DEFAULT_JOURNAL_PREFIX, type RedisJournal, type RedisJournalOptions, redisJournal } from './journal/redis-journal.js';
export type { ReplicaWait } from './replication/replica-wait.js';
export { type CommandCalls, diffCommandStats, readCommandStats } from './stats/command-stats.js';
export { DEFAULT_PREFIX, type RedisStore, type RedisStoreOptions, redisStore } from './store/redis-store.js';
