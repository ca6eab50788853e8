import type { IdempotencyStore, StoredResponse } from '@oncely/core';
import { uniqueKey, type TestRunner } from '../runner.js';
import { claimInput, completeInput, created, DAY, LONG, PRINT, SLACK, scopeOf, storeHarness } from './harness.js';
import type { StoreConformanceOptions } from './options.js';

/**
 * Group `claim`: claim-or-read on absent, held and completed keys; complete, release and extend by
 * the holder and by tokens that do not hold the lease; a completed outcome is final.
 */
export function storeClaimTests<S extends IdempotencyStore>(runner: TestRunner, options: StoreConformanceOptions<S>): void {
  const { test, must, raw } = storeHarness(runner, options);

  runner.describe(`${options.name}: claim-or-read`, () => {
    test(['store.claim.absent', 'store.get.record'], 'a first claim owns the key with fence 1 and reads as in progress for its lease and retention', async (store) => {
      const scope = scopeOf(uniqueKey('first'));
      must('store.claim.absent', 'a first claim did not answer claimed with fence 1 and no takeover', await store.claim(claimInput(scope, 't1'))).toEqual({
        kind: 'claimed',
        fence: 1,
        takeover: false,
      });
      const record = await store.get(scope);
      must('store.get.record', 'get did not read the claimed record as in progress', record?.state).toBe('in_progress');
      must('store.get.record', 'get reported another fence than the claim', record?.fence).toBe(1);
      must('store.get.record', 'get reported another fingerprint than the claim', record?.fingerprint).toBe(PRINT);
      must('store.get.record', 'get reported another scope than the claim', record?.scope).toEqual(scope);
      must('store.get.record', 'an in-progress record reported a response', record?.response).toBeUndefined();
      must('store.claim.absent', 'the lease does not run for about leaseMs', record?.leaseRemainingMs ?? -1).toBeGreaterThan(LONG / 2);
      must('store.claim.absent', 'the lease runs longer than leaseMs', record?.leaseRemainingMs ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(LONG);
      const retained = (record?.expiresAt.getTime() ?? 0) - (record?.createdAt.getTime() ?? 0);
      must('store.claim.absent', 'retention does not end retentionMs after createdAt', Math.abs(retained - DAY)).toBeLessThanOrEqual(SLACK);
      if (options.inspect) must('store.claim.absent', 'the raw record is not in progress', (await raw(store, scope))?.state).toBe('in_progress');
    });

    test(
      ['store.claim.held', 'store.complete.token', 'store.extend.token', 'store.release.token'],
      'a held key is read, not taken, and only its holder may complete, extend or release it',
      async (store) => {
        const scope = scopeOf(uniqueKey('held'));
        await store.claim(claimInput(scope, 'owner'));
        const second = await store.claim(claimInput(scope, 'intruder'));
        must('store.claim.held', 'a claim of a held key did not answer existing', second.kind).toBe('existing');
        if (second.kind !== 'existing') return;
        must('store.claim.held', 'a claim of a held key reported another state', second.record.state).toBe('in_progress');
        must('store.claim.held', 'a claim of a held key changed its fence', second.record.fence).toBe(1);
        must('store.claim.held', 'a claim of a held key reported no running lease', second.record.leaseRemainingMs ?? 0).toBeGreaterThan(0);
        const intruder = { scope, token: 'intruder' };
        must('store.complete.token', 'complete by a token that does not hold the lease was accepted', await store.complete(completeInput(scope, 'intruder'))).toBe('fence_lost');
        must('store.extend.token', 'extend by a token that does not hold the lease was accepted', await store.extend({ ...intruder, leaseMs: LONG })).toBe('fence_lost');
        must('store.release.token', 'release by a token that does not hold the lease was accepted', await store.release(intruder)).toBe('fence_lost');
        const record = await store.get(scope);
        must('store.claim.held', 'the held record changed under calls that do not hold it', [record?.state, record?.fence]).toEqual(['in_progress', 1]);
        must('store.complete.holder', "the holder's complete was refused", await store.complete(completeInput(scope, 'owner'))).toBe('ok');
      },
    );

    test(['store.complete.holder', 'store.claim.terminal'], 'complete stores the outcome exactly, ends the lease, and every later claim replays it', async (store) => {
      const scope = scopeOf(uniqueKey('complete'));
      await store.claim(claimInput(scope, 'owner'));
      const claimed = await store.get(scope);
      must('store.complete.holder', "the holder's complete was refused", await store.complete(completeInput(scope, 'owner'))).toBe('ok');
      for (const token of ['later-1', 'later-2']) {
        const again = await store.claim(claimInput(scope, token));
        must('store.claim.terminal', 'a claim of a completed key did not answer existing', again.kind).toBe('existing');
        if (again.kind !== 'existing') return;
        must('store.claim.terminal', 'a claim of a completed key reported another state', again.record.state).toBe('succeeded');
        must('store.complete.holder', 'the stored response is not the one completed', again.record.response).toEqual(created);
        must('store.complete.holder', 'a completed record still reports a lease', again.record.leaseRemainingMs).toBeUndefined();
        must('store.complete.holder', 'complete changed the fence', again.record.fence).toBe(1);
      }
      const record = await store.get(scope);
      must('store.get.record', 'get did not read the completed response', record?.response).toEqual(created);
      must('store.complete.holder', 'complete changed createdAt', record?.createdAt.getTime()).toBe(claimed?.createdAt.getTime());
      if (options.inspect) must('store.complete.holder', 'the raw record is not succeeded', (await raw(store, scope))?.state).toBe('succeeded');

      const declined: StoredResponse = { status: 402, headers: { 'retry-after': '0' }, bodyOmitted: true };
      const final = scopeOf(uniqueKey('final'));
      await store.claim(claimInput(final, 'owner'));
      await store.complete(completeInput(final, 'owner', { state: 'failed_final', response: declined }));
      const replay = await store.claim(claimInput(final, 'retry'));
      must('store.claim.terminal', 'a final failure did not replay as failed_final', replay.kind === 'existing' && replay.record.state).toBe('failed_final');
      must('store.complete.holder', 'the stored final failure is not the one completed', replay.kind === 'existing' && replay.record.response).toEqual(declined);
    });

    test(['store.complete.final'], 'a completed outcome is final: not even its owner can complete, extend or release it again', async (store) => {
      const scope = scopeOf(uniqueKey('immutable'));
      await store.claim(claimInput(scope, 'owner'));
      await store.complete(completeInput(scope, 'owner'));
      const overwrite = completeInput(scope, 'owner', { state: 'failed_final', response: { status: 500 } });
      must('store.complete.final', 'a second complete overwrote a completed outcome', await store.complete(overwrite)).toBe('fence_lost');
      must('store.complete.final', 'extend of a completed record was accepted', await store.extend({ scope, token: 'owner', leaseMs: LONG })).toBe('fence_lost');
      must('store.complete.final', 'release of a completed record was accepted', await store.release({ scope, token: 'owner' })).toBe('fence_lost');
      const record = await store.get(scope);
      must('store.complete.final', 'the completed outcome changed', [record?.state, record?.response]).toEqual(['succeeded', created]);
    });

    test(['store.release.holder'], 'release deletes the in-progress record, so the next claim is a fresh one', async (store) => {
      const scope = scopeOf(uniqueKey('release'));
      await store.claim(claimInput(scope, 'owner'));
      must('store.release.holder', "the holder's release was refused", await store.release({ scope, token: 'owner' })).toBe('ok');
      must('store.release.holder', 'a released record can still be read', await store.get(scope)).toBeUndefined();
      if (options.inspect) must('store.release.holder', 'a released record is still stored', await raw(store, scope)).toBeUndefined();
      must('store.release.holder', 'the claim after a release was not a fresh one', await store.claim(claimInput(scope, 'retry'))).toEqual({
        kind: 'claimed',
        fence: 1,
        takeover: false,
      });
    });

    test(['store.cas.absent'], 'complete, release and extend on a key nobody claimed are refused and create nothing', async (store) => {
      const scope = scopeOf(uniqueKey('absent'));
      must('store.cas.absent', 'complete of an absent key was accepted', await store.complete(completeInput(scope, 'ghost'))).toBe('fence_lost');
      must('store.cas.absent', 'release of an absent key was accepted', await store.release({ scope, token: 'ghost' })).toBe('fence_lost');
      must('store.cas.absent', 'extend of an absent key was accepted', await store.extend({ scope, token: 'ghost', leaseMs: LONG })).toBe('fence_lost');
      must('store.cas.absent', 'a call on an absent key created a record', await store.get(scope)).toBeUndefined();
      if (options.inspect) must('store.cas.absent', 'a call on an absent key stored a record', await raw(store, scope)).toBeUndefined();
    });
  });
}
