// What the broker packages' tests share. `@oncely/test-support/processes` holds the bodies of the
// child processes (imported by their `.mjs` scripts, never by a test file).
export { type ConnectionStormOptions, type ConnectionStormResult, connectionStorm, type Killer, type StormedParties, terminateBackends } from './connection-storm.js';
export { credit, eventOf, ledger, recorder } from './event-fixtures.js';
export { type AppliedRow, createPool, DATABASE_URL, exactlyOnceInOrder, outboxTables, type OutboxTable, type PostgresModule } from './outbox-tables.js';
export { frontendMessageCounter, type PgRoundTripProxy, type PgTraffic, startPgRoundTripProxy } from './pg-round-trip-proxy.js';
export { type PointMessage, type Process, type ProcessControlOptions, type ProcessScript, processControl, startProcess } from './process-control.js';
export { processStorm, type ProcessStormOptions, type ProcessStormResult, STORM } from './process-storm.js';
export { canListen, listenablePort, PRIVATE_PORTS } from './ports.js';
export { type ReachableAsOptions, reachable, reachableAs } from './reachable.js';
export { socketProxy } from './socket-proxy.js';
export { type ConsumerTx, type InboxLike, insertApplied, relayOnce, testRelay } from './test-relay.js';
export { IOREDIS_UNHEARD, unheardErrors } from './unheard-errors.js';
export { sleep, until } from './until.js';
