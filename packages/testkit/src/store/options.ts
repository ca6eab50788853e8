import type { IdempotencyStore, JoinOf, Scope } from '@oncely/core';

/** The groups of the store suite; each is also exported on its own (`storeClaimTests`, …). */
export type StoreGroup = 'claim' | 'leases' | 'expiry' | 'races' | 'engine' | 'scopes' | 'transactions' | 'model';

/** Options of {@link runStoreConformance} and of each group's own runner. */
export interface StoreConformanceOptions<S extends IdempotencyStore> {
  /** Names the suite, e.g. `postgres (pg)`. */
  readonly name: string;
  /** Returns a ready store; called once per test. Give each call its own table or prefix if you can. */
  readonly createStore: () => S | Promise<S>;
  /** Closes a store made by `createStore` (default: `store.close()`). */
  readonly closeStore?: (store: S) => Promise<void>;
  /**
   * Lets time pass for the store's expiry clock. Default: real sleep, which suits every server-clock
   * store; a memory store with a manual clock advances it instead.
   */
  readonly advanceTime?: (ms: number) => Promise<void>;
  /**
   * Reads the raw record behind the adapter's back (Auth.js style), to prove what reached storage.
   * Returns undefined when nothing is stored for the scope.
   */
  readonly inspect?: (store: S, scope: Scope) => Promise<{ readonly state: string } | undefined>;
  /**
   * Opens a transaction of the caller's own, for the `tx.join` test of a store with `join`: runs
   * `body` in it, commits when `body` resolves, rolls back and rethrows when it throws. A store with
   * `join` fails that test without it.
   */
  readonly openTransaction?: <T>(store: S, body: (tx: JoinOf<S>) => Promise<T>) => Promise<T>;
  /** Lease used by the lease and expiry tests, in ms (default 400: long enough for a slow CI round trip). */
  readonly shortLeaseMs?: number;
  /** Concurrent attempts in each race (default 50). */
  readonly raceSize?: number;
  /**
   * Rounds of each race, each on a fresh key (default 20): a store that breaks a race in a fraction
   * `p` of rounds passes with probability `(1 - p) ** raceRounds`, whatever `numRuns` says.
   */
  readonly raceRounds?: number;
  /**
   * Lease of the owner whose complete, release or extend races takeovers across its lapse, in ms
   * (default 40). Keep it well above one round trip to the store.
   */
  readonly raceLeaseMs?: number;
  /** fast-check runs per property (default 30). */
  readonly numRuns?: number;
  /** Per-test timeout in ms (default 30 000). */
  readonly timeoutMs?: number;
  /**
   * Turns groups off (Keyv style): `{ races: false }` runs everything else. Default: every group.
   * Only {@link runStoreConformance} reads it.
   */
  readonly groups?: { readonly [G in StoreGroup]?: boolean };
}
