import type { IdempotencyStore } from '@oncely/core';
import type { LeaseInput } from '@oncely/core/adapter';
import { uniqueKey, type TestRunner } from '../runner.js';
import { claimInput, completeInput, DAY, LONG, MARGIN, SLACK, scopeOf, storeHarness } from './harness.js';
import type { StoreConformanceOptions } from './options.js';

type LeaseCall = 'complete' | 'extend' | 'release';

/**
 * Group `leases`: what a lapsed lease allows (a takeover by the same request, with fence + 1, a fresh
 * retention and the first createdAt) and refuses (anything its lapsed owner tries, before or after
 * the takeover); extend renews the lease and carries the retention with it.
 */
export function storeLeaseTests<S extends IdempotencyStore>(runner: TestRunner, options: StoreConformanceOptions<S>): void {
  const { test, must, lease, advance } = storeHarness(runner, options);

  /** One lease call by `token`, named for messages. */
  const call = (store: S, method: LeaseCall, input: LeaseInput) =>
    method === 'complete'
      ? store.complete(completeInput(input.scope, input.token, { response: { status: 200, body: 'stale' } }))
      : method === 'extend'
        ? store.extend({ ...input, leaseMs: LONG })
        : store.release(input);

  runner.describe(`${options.name}: leases and fencing`, () => {
    test(
      ['store.claim.takeover', 'store.claim.takeover-retention', 'store.claim.takeover-created-at', 'store.claim.takeover-fingerprint'],
      'a lapsed lease is taken over by the same request only: fence + 1, a fresh retention, the first createdAt',
      async (store) => {
        const scope = scopeOf(uniqueKey('takeover'));
        const other = scopeOf(uniqueKey('lapsed-mismatch'));
        // Retention outlives the lease by three margins: two to take over in on a loaded host, short enough to outwait.
        await store.claim(claimInput(scope, 'crashed', { leaseMs: lease, retentionMs: lease + 3 * MARGIN }));
        await store.claim(claimInput(other, 'first', { leaseMs: lease, fingerprint: 'a'.repeat(64) }));
        const first = await store.get(scope);
        must('store.claim.held', 'a lease that still runs was taken over', (await store.claim(claimInput(scope, 'too-early'))).kind).toBe('existing');
        await advance(lease + MARGIN);

        const mismatch = await store.claim(claimInput(other, 'second', { fingerprint: 'b'.repeat(64) }));
        must('store.claim.takeover-fingerprint', 'a lapsed lease was taken over by a request with another fingerprint', mismatch.kind).toBe('existing');
        must('store.claim.takeover-fingerprint', 'the record does not keep its first fingerprint', mismatch.kind === 'existing' && mismatch.record.fingerprint).toBe('a'.repeat(64));

        must('store.claim.takeover', 'the takeover of a lapsed lease did not answer claimed with fence 2 and takeover', await store.claim(claimInput(scope, 'successor'))).toEqual({
          kind: 'claimed',
          fence: 2,
          takeover: true,
        });
        const taken = await store.get(scope);
        must('store.claim.takeover-retention', 'the takeover kept the old retention instead of now + retentionMs', taken?.expiresAt.getTime() ?? 0).toBeGreaterThan(
          (first?.expiresAt.getTime() ?? 0) + DAY / 2,
        );
        must('store.claim.takeover-created-at', 'the takeover changed createdAt', taken?.createdAt.getTime()).toBe(first?.createdAt.getTime());
        must('store.claim.takeover', 'the record does not carry the new fence', taken?.fence).toBe(2);
        must('store.claim.takeover', 'the new lease does not run for leaseMs', taken?.leaseRemainingMs ?? 0).toBeGreaterThan(LONG / 2);
        must('store.claim.takeover', "the successor's lease was taken over at once", (await store.claim(claimInput(scope, 'third'))).kind).toBe('existing');
        await advance(3 * MARGIN);
        must('store.claim.takeover-retention', "the record expired under its new owner at the old owner's retention", (await store.get(scope))?.fence).toBe(2);
        must('store.complete.holder', "the successor's complete was refused", await store.complete(completeInput(scope, 'successor'))).toBe('ok');
      },
    );

    test(
      ['store.complete.lapsed', 'store.extend.lapsed', 'store.release.lapsed'],
      'an owner whose lease lapsed can neither complete, extend nor release, before or after a takeover',
      async (store) => {
        const methods: LeaseCall[] = ['complete', 'extend', 'release'];
        const scopes = methods.map((method) => scopeOf(uniqueKey(`lapsed-${method}`)));
        for (const scope of scopes) await store.claim(claimInput(scope, 'slow', { leaseMs: lease }));
        await advance(lease + MARGIN);
        for (const [index, method] of methods.entries()) {
          const scope = scopes[index]!;
          const clause = `store.${method}.lapsed`;
          must(clause, `${method} by an owner whose lease lapsed was accepted (before any takeover)`, await call(store, method, { scope, token: 'slow' })).toBe('fence_lost');
          const after = await store.get(scope);
          must(clause, `${method} by an owner whose lease lapsed changed the record`, [after?.state, after?.fence, after?.leaseRemainingMs]).toEqual(['in_progress', 1, 0]);
          must(clause, `after ${method} by a lapsed owner the lease could not be taken over`, await store.claim(claimInput(scope, 'successor'))).toEqual({
            kind: 'claimed',
            fence: 2,
            takeover: true,
          });
          must(clause, `${method} by the lapsed owner was accepted after a takeover`, await call(store, method, { scope, token: 'slow' })).toBe('fence_lost');
          const taken = await store.get(scope);
          must(clause, `${method} by the lapsed owner changed the successor's record`, [taken?.state, taken?.fence]).toEqual(['in_progress', 2]);
          must('store.complete.holder', "the successor's complete was refused", await store.complete(completeInput(scope, 'successor'))).toBe('ok');
        }
      },
    );

    test(['store.extend.holder', 'store.extend.carries-retention'], 'extend renews a lease past its first expiry and carries the retention with it', async (store) => {
      const renewed = scopeOf(uniqueKey('extend'));
      const carried = scopeOf(uniqueKey('extend-retention'));
      await store.claim(claimInput(renewed, 'worker', { leaseMs: lease }));
      // Retention no longer than the lease: only extend keeps this record alive.
      await store.claim(claimInput(carried, 'worker', { leaseMs: lease, retentionMs: lease }));
      must('store.extend.holder', "the holder's extend was refused", await store.extend({ scope: renewed, token: 'worker', leaseMs: LONG })).toBe('ok');
      must('store.extend.holder', "the holder's extend was refused", await store.extend({ scope: carried, token: 'worker', leaseMs: LONG })).toBe('ok');
      const extended = await store.get(renewed);
      must('store.extend.holder', 'extend did not renew the lease for leaseMs', extended?.leaseRemainingMs ?? 0).toBeGreaterThan(LONG / 2);
      must('store.extend.holder', 'extend changed the fence', extended?.fence).toBe(1);
      const kept = await store.get(carried);
      must('store.extend.carries-retention', 'extend left the retention ending before the new lease', (kept?.expiresAt.getTime() ?? 0) - (kept?.createdAt.getTime() ?? 0)).toBeGreaterThan(LONG - SLACK);
      await advance(lease + MARGIN);
      must('store.extend.holder', 'the extended lease was taken over at its first expiry', (await store.claim(claimInput(renewed, 'other'))).kind).toBe('existing');
      must('store.extend.carries-retention', 'the record expired while its extended lease ran', (await store.get(carried))?.state).toBe('in_progress');
      must('store.extend.carries-retention', 'the extended record was claimed afresh while its lease ran', (await store.claim(claimInput(carried, 'other'))).kind).toBe('existing');
      for (const scope of [renewed, carried]) {
        must('store.extend.holder', 'the extended holder could not complete', await store.complete(completeInput(scope, 'worker'))).toBe('ok');
      }
    });
  });
}
