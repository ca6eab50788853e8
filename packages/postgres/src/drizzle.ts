// `@oncely/postgres/drizzle`: oncely's store, outbox and inbox through Drizzle (drizzle-orm is imported only here).
export { type DrizzlePgDatabase, type DrizzleTransaction, drizzleBridge } from './bridge/drizzle-bridge.js';
