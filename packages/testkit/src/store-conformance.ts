import type { IdempotencyStore } from '@oncely/core';
import type { TestRunner } from './runner.js';
import { storeClaimTests } from './store/claim-tests.js';
import { storeEngineTests } from './store/engine-tests.js';
import { storeExpiryTests } from './store/expiry-tests.js';
import { storeLeaseTests } from './store/lease-tests.js';
import { storeModelTests } from './store/model-tests.js';
import type { StoreConformanceOptions, StoreGroup } from './store/options.js';
import { storeRaceTests } from './store/race-tests.js';
import { storeScopeTests } from './store/scope-tests.js';
import { storeTransactionTests } from './store/transaction-tests.js';

export type { StoreConformanceOptions, StoreGroup } from './store/options.js';

/** Every group of the store suite, in the order `runStoreConformance` registers them. */
export const storeGroups = {
  claim: storeClaimTests,
  leases: storeLeaseTests,
  expiry: storeExpiryTests,
  races: storeRaceTests,
  engine: storeEngineTests,
  scopes: storeScopeTests,
  transactions: storeTransactionTests,
  model: storeModelTests,
} as const satisfies Record<StoreGroup, (runner: TestRunner, options: StoreConformanceOptions<IdempotencyStore>) => void>;

/**
 * The storage contract as tests: run it against a real server and a store passes or it does not
 * implement oncely. Composes every group (claim-or-read, leases and fencing, retention and expiry,
 * races, the engine, scope isolation, transactions, the fast-check model); `groups` turns some off.
 * Every test is named for the contract clauses it proves (`[store.claim.atomic] …`), and every failure
 * names the clause it caught broken.
 *
 * ```ts
 * import { describe, it, expect } from 'vitest';
 * import { runStoreConformance } from '@oncely/testkit';
 * runStoreConformance({ describe, it, expect }, { name: 'my store', createStore: () => myStore() });
 * ```
 */
export function runStoreConformance<S extends IdempotencyStore>(runner: TestRunner, options: StoreConformanceOptions<S>): void {
  for (const [group, register] of Object.entries(storeGroups) as [StoreGroup, (typeof storeGroups)[StoreGroup]][]) {
    if (options.groups?.[group] !== false) register(runner, options);
  }
}
