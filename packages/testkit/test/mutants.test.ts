import type { IdempotencyStore, Scope, StoredResponse } from '@oncely/core';
import type { ClaimInput, CompleteInput, LeaseInput } from '@oncely/core/adapter';
import { describe, expect, it } from 'vitest';
import { runStoreConformance, type TestRunner } from '../src/index.js';

/** A bug a store could have; each one must make the conformance suite fail. */
type Bug = 'check-then-insert' | 'ignores-token' | 'never-expires' | 'joined-scope' | 'same-fence' | 'release-by-anyone' | 'none';

interface Row {
  fingerprint: string;
  state: 'in_progress' | 'succeeded' | 'failed_final';
  token: string;
  fence: number;
  lease: number;
  expires: number;
  response?: StoredResponse;
  scope: Scope;
}

/** A small store written from scratch, correct unless told to carry one bug. */
function buggyStore(bug: Bug): IdempotencyStore {
  const rows = new Map<string, Row>();
  const id = (s: Scope) => (bug === 'joined-scope' ? `${s.tenant}:${s.principal}:${s.operation}:${s.key}` : JSON.stringify([s.tenant, s.principal, s.operation, s.key]));
  const live = (s: Scope) => {
    const row = rows.get(id(s));
    return row && (bug === 'never-expires' || row.expires > Date.now()) ? row : undefined;
  };
  const owns = (input: LeaseInput) => {
    const row = live(input.scope);
    if (row?.state !== 'in_progress') return undefined;
    if (bug === 'ignores-token') return row;
    return row.token === input.token && row.lease > Date.now() ? row : undefined;
  };
  const record = (row: Row) => ({
    scope: row.scope,
    fingerprint: row.fingerprint,
    state: row.state,
    fence: row.fence,
    ...(row.state === 'in_progress' ? { leaseRemainingMs: row.lease - Date.now() } : { response: row.response }),
    createdAt: new Date(),
    expiresAt: new Date(row.expires),
  });
  return {
    name: `buggy(${bug})`,
    capabilities: { transactions: false, nativeTtl: false },
    async claim(input: ClaimInput) {
      let row = live(input.scope);
      // The classic bug: decide on a read, then write after an await.
      if (bug === 'check-then-insert') await new Promise((resolve) => setTimeout(resolve, 1));
      if (bug !== 'check-then-insert') row = live(input.scope);
      const lapsed = row?.state === 'in_progress' && row.lease <= Date.now() && row.fingerprint === input.fingerprint;
      if (row && !lapsed) return { kind: 'existing' as const, record: record(row) };
      const fence = lapsed && bug !== 'same-fence' ? row!.fence + 1 : row && lapsed ? row.fence : 1;
      rows.set(id(input.scope), {
        scope: input.scope,
        fingerprint: input.fingerprint,
        state: 'in_progress',
        token: input.token,
        fence,
        lease: Date.now() + input.leaseMs,
        expires: Date.now() + input.retentionMs,
      });
      return { kind: 'claimed' as const, fence, takeover: Boolean(lapsed) };
    },
    async complete(input: CompleteInput) {
      const row = owns(input);
      if (!row) return 'fence_lost';
      Object.assign(row, { state: input.state, response: JSON.parse(JSON.stringify(input.response)), expires: Date.now() + input.retentionMs });
      return 'ok';
    },
    async release(input: LeaseInput) {
      const row = bug === 'release-by-anyone' ? live(input.scope) : owns(input);
      if (row?.state !== 'in_progress') return 'fence_lost';
      rows.delete(id(input.scope));
      return 'ok';
    },
    async extend(input: LeaseInput & { leaseMs: number }) {
      const row = owns(input);
      if (!row) return 'fence_lost';
      row.lease = Date.now() + input.leaseMs;
      return 'ok';
    },
    async get(scope: Scope) {
      const row = live(scope);
      return row && record(row);
    },
    async purgeExpired(limit: number) {
      let n = 0;
      for (const [key, row] of rows) {
        if (n >= limit || row.expires > Date.now() || bug === 'never-expires') continue;
        rows.delete(key);
        n++;
      }
      return n;
    },
    async close() {},
  };
}

/** Runs the whole suite for one store with a runner that records which tests fail. */
async function failingTests(bug: Bug): Promise<string[]> {
  const tests: { name: string; body: () => Promise<void> }[] = [];
  const prefix: string[] = [];
  const runner: TestRunner = {
    describe(name, body) {
      prefix.push(name);
      body();
      prefix.pop();
    },
    it(name, body) {
      tests.push({ name: `${prefix.join(' > ')} > ${name}`, body });
    },
    expect: expect as unknown as TestRunner['expect'],
  };
  runStoreConformance(runner, { name: bug, createStore: () => buggyStore(bug), shortLeaseMs: 60, numRuns: 15, raceSize: 20 });
  const failed: string[] = [];
  for (const test of tests) {
    try {
      await test.body();
    } catch {
      failed.push(test.name);
    }
  }
  return failed;
}

describe('the conformance suite catches broken stores', () => {
  it('passes a correct store written independently of the memory store', async () => {
    expect(await failingTests('none')).toEqual([]);
  }, 60_000);

  it.each([
    ['check-then-insert', 'concurrent attempts with one key execute the handler exactly once'],
    ['ignores-token', "after a takeover the stale owner's complete, release and extend are rejected"],
    ['never-expires', 'an expired record is absent for every reader before cleanup removes it'],
    ['joined-scope', 'scopes that differ only in where a separator falls never share a record'],
    ['same-fence', 'a lapsed lease is taken over with a new token and a higher fence'],
    ['release-by-anyone', 'release deletes the in-progress record so the next claim executes'],
  ] as const)('a store with the bug "%s" fails "%s"', async (bug, expected) => {
    const failed = await failingTests(bug);
    expect(failed.some((name) => name.endsWith(expected))).toBe(true);
  }, 60_000);
});
