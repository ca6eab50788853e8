import type { IdempotencyStore, Scope, StoredResponse } from '@oncely/core';
import type { ClaimInput, CompleteInput } from '@oncely/core/adapter';
import { type ClauseExpect, type ClauseId, clauseExpect, resourceTest } from '../clause.js';
import { sleep, type TestRunner } from '../runner.js';
import type { StoreConformanceOptions } from './options.js';

/** A lease or retention no test outlives. */
export const LONG = 60_000;
/** The retention most tests claim with. */
export const DAY = 86_400_000;
/** How far past a lease or retention the suite waits before it judges it over: a slow CI round trip. */
export const MARGIN = 150;
/** Slack on times a store reports (createdAt, expiresAt): they come from one clock but may be rounded. */
export const SLACK = 1_000;
/** The fingerprint most tests claim with. */
export const PRINT = 'f'.repeat(64);

/** A scope in the suite's usual tenant, principal and operation. */
export const scopeOf = (key: string, over: Partial<Scope> = {}): Scope => ({
  tenant: 'tenant-a',
  principal: 'alice',
  operation: 'payments.create.v1',
  key,
  ...over,
});

/** A response with every field a store must keep exactly. */
export const created: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json', location: '/v1/payments/pay_1' },
  body: { id: 'pay_1', amount: '10.00', note: 'naïve café ✓ 😀', nested: { list: [1, 2.5, null, true] } },
  resourceId: 'pay_1',
};

/** What a test may change in a claim. */
export interface ClaimOverrides {
  readonly fingerprint?: string;
  readonly leaseMs?: number;
  readonly retentionMs?: number;
}

/** A claim with the suite's defaults: fingerprint `f…f`, a long lease, a day's retention. */
export const claimInput = (scope: Scope, token: string, over: ClaimOverrides = {}): ClaimInput => ({
  scope,
  token,
  fingerprint: over.fingerprint ?? PRINT,
  leaseMs: over.leaseMs ?? LONG,
  retentionMs: over.retentionMs ?? DAY,
});

/** A complete of {@link created} (or `response`) kept for a day (or `retentionMs`). */
export const completeInput = (
  scope: Scope,
  token: string,
  over: { readonly response?: StoredResponse; readonly retentionMs?: number; readonly state?: CompleteInput['state'] } = {},
): CompleteInput => ({
  scope,
  token,
  state: over.state ?? 'succeeded',
  response: over.response ?? created,
  retentionMs: over.retentionMs ?? DAY,
});

/** What every group of the store suite is built from: the resolved options and the test helpers. */
export interface StoreHarness<S extends IdempotencyStore> {
  readonly runner: TestRunner;
  readonly options: StoreConformanceOptions<S>;
  /** The short lease of the lease and expiry tests. */
  readonly lease: number;
  readonly raceSize: number;
  readonly raceRounds: number;
  readonly raceLease: number;
  readonly numRuns: number;
  readonly timeout: number;
  /** Lets the store's clock move. */
  readonly advance: (ms: number) => Promise<void>;
  /** Assertions whose failures name the clause. */
  readonly must: ClauseExpect;
  /** A test on a fresh store, named for its clauses. */
  test(clauses: readonly ClauseId[], title: string, body: (store: S) => Promise<void>, timeoutMs?: number): void;
  /** The raw record behind the adapter, when the suite was given `inspect`. */
  raw(store: S, scope: Scope): Promise<{ readonly state: string } | undefined>;
}

/** Resolves the options' defaults once for a group. */
export function storeHarness<S extends IdempotencyStore>(runner: TestRunner, options: StoreConformanceOptions<S>): StoreHarness<S> {
  const timeout = options.timeoutMs ?? 30_000;
  const close = (store: S) => (options.closeStore ? options.closeStore(store) : store.close());
  return {
    runner,
    options,
    lease: options.shortLeaseMs ?? 400,
    raceSize: options.raceSize ?? 50,
    raceRounds: options.raceRounds ?? 20,
    raceLease: options.raceLeaseMs ?? 40,
    numRuns: options.numRuns ?? 30,
    timeout,
    advance: options.advanceTime ?? sleep,
    must: clauseExpect(runner.expect),
    test: resourceTest(runner.it, timeout, options.createStore, close),
    raw: async (store, scope) => (options.inspect ? options.inspect(store, scope) : undefined),
  };
}
