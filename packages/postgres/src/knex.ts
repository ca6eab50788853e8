// `@oncely/postgres/knex`: oncely's store, outbox and inbox through Knex (knex's types only; nothing of it is imported at run time).
export { knexBridge } from './bridge/knex-bridge.js';
