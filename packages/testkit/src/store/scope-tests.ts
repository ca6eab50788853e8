import type { IdempotencyStore, Scope } from '@oncely/core';
import fc from 'fast-check';
import { uniqueKey, type TestRunner } from '../runner.js';
import { claimInput, scopeOf, storeHarness } from './harness.js';
import type { StoreConformanceOptions } from './options.js';

/** Group `scopes`: tenant, principal, operation and key all name the record, with no collisions. */
export function storeScopeTests<S extends IdempotencyStore>(runner: TestRunner, options: StoreConformanceOptions<S>): void {
  const { test, must, numRuns } = storeHarness(runner, options);

  /** Claims every scope with its own token; each must be claimed, and read back as itself. */
  const claimEach = async (store: S, clause: string, scopes: readonly Scope[]) => {
    for (const [index, scope] of scopes.entries()) {
      must(clause, `the scope ${JSON.stringify(scope)} reached another scope's record`, (await store.claim(claimInput(scope, `owner-${index}`))).kind).toBe('claimed');
    }
    for (const scope of scopes) must(clause, `the record of ${JSON.stringify(scope)} reports another scope`, (await store.get(scope))?.scope).toEqual(scope);
  };

  runner.describe(`${options.name}: scope isolation`, () => {
    test(['store.scope.isolation'], 'the same key in another tenant, principal or operation reaches another record', async (store) => {
      const key = uniqueKey('isolation');
      await claimEach(store, 'store.scope.isolation', [
        scopeOf(key),
        scopeOf(key, { tenant: 'tenant-b' }),
        scopeOf(key, { principal: 'bob' }),
        scopeOf(key, { principal: '' }),
        scopeOf(key, { operation: 'payments.refund.v1' }),
      ]);
    });

    test(['store.scope.injective'], 'scopes that differ only in where a separator falls never share a record', async (store) => {
      const run = uniqueKey('separator');
      const visible = [':', '|', '/', '\\', '{', '}', '"', ',', '.', '#', '%', '-', '_', '='];
      const scopes: Scope[] = [];
      for (const sep of [...visible, ' ', '\u00e9', '\u{1F600}']) {
        scopes.push(scopeOf(run, { tenant: `a${sep}b`, principal: 'c' }), scopeOf(run, { tenant: 'a', principal: `b${sep}c` }));
      }
      for (const sep of visible) {
        scopes.push(scopeOf(run, { principal: `p${sep}q` }), scopeOf(`q${sep}${run}`, { principal: 'p' }));
      }
      scopes.push(scopeOf(`v1:${run}`, { operation: 'pay' }), scopeOf(run, { operation: 'pay:v1' }));
      await claimEach(store, 'store.scope.injective', scopes);
    });

    test(['store.scope.injective'], 'distinct scopes never collide, for any characters (property)', async (store) => {
      const part = fc.string({ unit: fc.constantFrom('a', ':', '|', '/', '{', '}', '\\', '"', ' ', '\u00e9', '\u{1F600}'), maxLength: 4 });
      const keyPart = fc.string({ unit: fc.constantFrom('a', ':', '|', '/', '{', '}', '\\', '"', '-'), minLength: 1, maxLength: 4 });
      await fc.assert(
        fc.asyncProperty(fc.tuple(part, part, keyPart), fc.tuple(part, part, keyPart), async ([t1, p1, k1], [t2, p2, k2]) => {
          const run = uniqueKey('prop');
          const a = scopeOf(`${run}${k1}`, { tenant: `t${t1}`, principal: p1 });
          const b = scopeOf(`${run}${k2}`, { tenant: `t${t2}`, principal: p2 });
          must('store.scope.injective', `the scope ${JSON.stringify(a)} was not claimed`, (await store.claim(claimInput(a, 'a'))).kind).toBe('claimed');
          const same = a.tenant === b.tenant && a.principal === b.principal && a.key === b.key;
          const verdict = same ? 'the same scope was claimed twice' : `${JSON.stringify(b)} collided with ${JSON.stringify(a)}`;
          must('store.scope.injective', verdict, (await store.claim(claimInput(b, 'b'))).kind).toBe(same ? 'existing' : 'claimed');
        }),
        { numRuns },
      );
    });
  });
}
