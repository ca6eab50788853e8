// `@oncely/postgres/kysely`: oncely's store, outbox and inbox through Kysely (kysely is imported only here).
export { kyselyBridge } from './bridge/kysely-bridge.js';
