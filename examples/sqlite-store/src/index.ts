export { type SqliteStore, type SqliteStoreOptions, sqliteStore } from './sqlite-store.js';
