export { type Matchers, sleep, type TestRunner, uniqueKey } from './runner.js';
export { runStoreConformance, type StoreConformanceOptions } from './store-conformance.js';
export { type Model, type ModelReal, modelCommands } from './store-model.js';
export { type StoreGroup, storeGroups } from './store-conformance.js';
export { storeClaimTests } from './store/claim-tests.js';
export { storeLeaseTests } from './store/lease-tests.js';
export { storeExpiryTests } from './store/expiry-tests.js';
export { storeRaceTests } from './store/race-tests.js';
export { storeEngineTests } from './store/engine-tests.js';
export { storeScopeTests } from './store/scope-tests.js';
export { storeTransactionTests } from './store/transaction-tests.js';
export { storeModelTests } from './store/model-tests.js';
export { type ClauseExpect, type ClauseId, clauseExpect, clauseFailure, clauseTitle } from './clause.js';
export { clausesOfFailure, clausesOfTitle, type RecordedTest, type RecordSuiteOptions, recordSuite } from './recorded-run.js';
export { type JournalConformanceOptions, runJournalConformance } from './journal-conformance.js';
export { type FlowConformanceOptions, runFlowConformance } from './flow-conformance.js';
export {
  type OutboxUnderTest,
  type RawOutboxRow,
  runOutboxSourceConformance,
  type SourceConformanceOptions as OutboxSourceConformanceOptions,
} from './outbox-source-conformance.js';
export { applyWithInbox, type MemoryBroker, memoryBroker, type Verdict } from './memory/memory-broker.js';
export { type MemoryOutbox, type MemoryOutboxOptions, type MemoryOutboxRow, memoryOutbox } from './memory/memory-outbox.js';
export {
  isMemoryTransaction,
  type MemoryTransaction,
  type MemoryTransactions,
  memoryTransactions,
} from './memory/memory-transactions.js';
export { type MemoryInbox, type MemoryInboxOptions, type MemoryInboxRecord, memoryInbox } from './memory/memory-inbox.js';
export { type OutboxConformanceOptions, type OutboxWriterUnderTest, runOutboxConformance } from './outbox-conformance.js';
export { type InboxConformanceOptions, type InboxSetup, type InboxUnderTest, runInboxConformance } from './inbox-conformance.js';
export { expectCode } from './expect-code.js';
