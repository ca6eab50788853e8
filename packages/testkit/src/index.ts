export { type Matchers, sleep, type TestRunner, uniqueKey } from './runner.js';
export { runStoreConformance, type StoreConformanceOptions } from './store-conformance.js';
export { type Model, type ModelReal, modelCommands } from './store-model.js';
export { type JournalConformanceOptions, runJournalConformance } from './journal-conformance.js';
export {
  type OutboxUnderTest,
  type RawOutboxRow,
  runOutboxSourceConformance,
  type SourceConformanceOptions as OutboxSourceConformanceOptions,
} from './outbox-source-conformance.js';
