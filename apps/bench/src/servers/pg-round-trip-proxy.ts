// The wire proxy that counts PostgreSQL round trips lives in @oncely/test-support, so the package
// tests (the ORM bridges' round-trip matrix) count the same way the bench does.
export { frontendMessageCounter, type PgRoundTripProxy, type PgTraffic, startPgRoundTripProxy } from '@oncely/test-support';
