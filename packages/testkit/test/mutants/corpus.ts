import { manualClock } from '@oncely/core';
import { type RecordedTest, recordSuite, runStoreConformance, type TestRunner } from '../../src/index.js';
import { type Bug, referenceStore } from './reference-store.js';

/** Every bug of the corpus and the clause whose test must catch it. */
export const corpus: readonly (readonly [Bug, string])[] = [
  ['check-then-insert', 'store.claim.atomic'],
  ['read-then-update-takeover', 'store.claim.takeover-atomic'],
  ['same-fence', 'store.claim.takeover'],
  ['takeover-flag-false', 'store.claim.takeover'],
  ['takeover-keeps-retention', 'store.claim.takeover-retention'],
  ['takeover-resets-created-at', 'store.claim.takeover-created-at'],
  ['takeover-any-fingerprint', 'store.claim.takeover-fingerprint'],
  ['takeover-while-held', 'store.claim.held'],
  ['lease-in-seconds', 'store.claim.absent'],
  ['expired-keeps-fence', 'store.claim.expired'],
  ['expired-reuses-fence', 'store.claim.expired'],
  ['never-expires', 'store.get.expired'],
  ['joined-scope', 'store.scope.injective'],
  ['ignores-principal', 'store.scope.isolation'],
  ['ignores-token', 'store.complete.token'],
  ['complete-lapsed-owner', 'store.complete.lapsed'],
  ['complete-ignores-retention', 'store.complete.retention'],
  ['complete-overwrites-outcome', 'store.complete.final'],
  ['complete-drops-resource-id', 'store.complete.holder'],
  ['complete-check-then-write', 'store.complete.race'],
  ['complete-upserts-absent', 'store.cas.absent'],
  ['release-by-anyone', 'store.release.token'],
  ['release-lapsed-owner', 'store.release.lapsed'],
  ['release-keeps-record', 'store.release.holder'],
  ['release-deletes-outcome', 'store.complete.final'],
  ['release-check-then-delete', 'store.release.race'],
  ['extend-lapsed-owner', 'store.extend.lapsed'],
  ['extend-keeps-retention', 'store.extend.carries-retention'],
  ['extend-noop', 'store.extend.holder'],
  ['extend-check-then-write', 'store.extend.race'],
  ['purge-ignores-limit', 'store.purge.bounded'],
  ['purge-deletes-live', 'store.purge.live'],
];

/** Runs the store suite (or only the tests of `clauses`) against the reference store with `bug`, on a manual clock. */
export function run(
  expect: unknown,
  bug: Bug | undefined,
  over: { readonly clauses?: readonly string[]; readonly raceRounds?: number; readonly raceSize?: number } = {},
): Promise<RecordedTest[]> {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const { clauses } = over;
  return recordSuite(
    expect as TestRunner['expect'],
    (runner) =>
      runStoreConformance(runner, {
        name: bug ?? 'correct',
        createStore: () => referenceStore(clock, bug),
        advanceTime: (ms) => clock.advance(ms),
        raceSize: over.raceSize ?? 20,
        numRuns: 15,
        ...(over.raceRounds && { raceRounds: over.raceRounds }),
      }),
    clauses ? { filter: (test) => test.clauses.some((clause) => clauses.includes(clause)) } : {},
  );
}

