import type { IdempotencyStore } from '@oncely/core';
import { uniqueKey, type TestRunner } from '../runner.js';
import { claimInput, completeInput, created, DAY, LONG, MARGIN, SLACK, scopeOf, storeHarness } from './harness.js';
import type { StoreConformanceOptions } from './options.js';

/**
 * Group `expiry`: retention is what complete says, an expired record is absent to every reader before
 * any cleanup (and claiming it starts afresh), and `purgeExpired` deletes in bounded batches.
 */
export function storeExpiryTests<S extends IdempotencyStore>(runner: TestRunner, options: StoreConformanceOptions<S>): void {
  const { test, must, lease, advance, raw } = storeHarness(runner, options);

  runner.describe(`${options.name}: retention and expiry`, () => {
    test(['store.complete.retention'], "complete keeps the outcome for its own retentionMs, not for the claim's", async (store) => {
      const shortened = scopeOf(uniqueKey('retention-short'));
      const lengthened = scopeOf(uniqueKey('retention-long'));
      await store.claim(claimInput(shortened, 'owner'));
      await store.claim(claimInput(lengthened, 'owner', { leaseMs: lease, retentionMs: lease }));
      await store.complete(completeInput(shortened, 'owner', { retentionMs: lease }));
      await store.complete(completeInput(lengthened, 'owner', { retentionMs: DAY }));
      const kept = await store.get(lengthened);
      must('store.complete.retention', 'the outcome is not kept for retentionMs from its complete', (kept?.expiresAt.getTime() ?? 0) - (kept?.createdAt.getTime() ?? 0)).toBeGreaterThan(DAY - SLACK);
      await advance(lease + MARGIN);
      must('store.complete.retention', "complete ignored its retentionMs: the outcome outlived it with the claim's retention", await store.get(shortened)).toBeUndefined();
      must('store.complete.retention', "complete ignored its retentionMs: the outcome expired with the claim's retention", (await store.get(lengthened))?.state).toBe('succeeded');
      must('store.claim.expired', 'the claim of an expired outcome was not a fresh one', await store.claim(claimInput(shortened, 'late'))).toEqual({ kind: 'claimed', fence: 1, takeover: false });
    });

    test(['store.get.expired', 'store.claim.expired'], 'an expired record is absent for every reader before cleanup, and claiming it starts afresh', async (store) => {
      const done = scopeOf(uniqueKey('expired'));
      const abandoned = scopeOf(uniqueKey('expired-in-progress'));
      await store.claim(claimInput(done, 'owner', { leaseMs: lease, retentionMs: lease }));
      await store.complete(completeInput(done, 'owner', { retentionMs: lease }));
      await store.claim(claimInput(abandoned, 'crashed', { leaseMs: lease, retentionMs: lease }));
      const before = await store.get(abandoned);
      must('store.get.record', 'a live outcome could not be read', (await store.get(done))?.state).toBe('succeeded');
      await advance(lease + MARGIN);
      must('store.get.expired', 'get read an expired outcome', await store.get(done)).toBeUndefined();
      must('store.get.expired', 'get read an expired in-progress record', await store.get(abandoned)).toBeUndefined();
      must('store.claim.expired', 'an expired outcome was replayed, or claimed with a used fence', await store.claim(claimInput(done, 'late', { fingerprint: 'c'.repeat(64) }))).toEqual({
        kind: 'claimed',
        fence: 1,
        takeover: false,
      });
      must('store.claim.expired', 'an expired in-progress record was taken over instead of claimed afresh', await store.claim(claimInput(abandoned, 'late'))).toEqual({
        kind: 'claimed',
        fence: 1,
        takeover: false,
      });
      const fresh = await store.get(abandoned);
      must('store.claim.expired', 'the fresh claim kept the expired record\'s createdAt', fresh?.createdAt.getTime() ?? 0).toBeGreaterThan(before?.createdAt.getTime() ?? 0);
      must('store.complete.holder', 'the fresh claim could not complete', await store.complete(completeInput(done, 'late'))).toBe('ok');
      must('store.complete.holder', 'the fresh outcome is not the one completed', (await store.get(done))?.response).toEqual(created);
    });

    test(['store.claim.expired'], 'an expired record that was taken over is claimed afresh at fence 1, not at its old fence', async (store) => {
      // A record still at fence 1 cannot tell "restarted at 1" from "kept its fence": this one is at fence 2.
      const scope = scopeOf(uniqueKey('expired-after-takeover'));
      await store.claim(claimInput(scope, 'crashed', { leaseMs: lease, retentionMs: LONG }));
      await advance(lease + MARGIN);
      must('store.claim.takeover', 'a lapsed lease was not taken over at fence 2', await store.claim(claimInput(scope, 'second', { leaseMs: lease, retentionMs: lease }))).toEqual({
        kind: 'claimed',
        fence: 2,
        takeover: true,
      });
      await advance(lease + MARGIN);
      must('store.claim.expired', 'an expired record was claimed with its old fence (or as a takeover) instead of afresh at fence 1', await store.claim(claimInput(scope, 'late'))).toEqual({
        kind: 'claimed',
        fence: 1,
        takeover: false,
      });
      must('store.claim.expired', 'the fresh record does not read fence 1', (await store.get(scope))?.fence).toBe(1);
    });

    test(['store.purge.bounded', 'store.purge.live'], 'purgeExpired deletes expired records in bounded batches and keeps live ones', async (store) => {
      const prefix = uniqueKey('purge');
      const doomed = [0, 1, 2, 3, 4].map((i) => scopeOf(`${prefix}-old-${i}`));
      const kept = scopeOf(`${prefix}-live`);
      const done = scopeOf(`${prefix}-done`);
      for (const scope of doomed) await store.claim(claimInput(scope, 'owner', { leaseMs: lease, retentionMs: lease }));
      await store.claim(claimInput(kept, 'owner'));
      await store.claim(claimInput(done, 'owner', { leaseMs: lease, retentionMs: lease }));
      await store.complete(completeInput(done, 'owner', { retentionMs: LONG }));
      await advance(lease + MARGIN);
      let purged = 0;
      for (let round = 0; round < 100; round++) {
        const batch = await store.purgeExpired(2);
        must('store.purge.bounded', 'purgeExpired(2) deleted more than 2 records', batch).toBeLessThanOrEqual(2);
        purged += batch;
        if (batch === 0) break;
      }
      // Stores with native TTL may have removed the records themselves, so purge finds fewer.
      const purgeable = options.inspect && !store.capabilities.nativeTtl;
      must('store.purge.bounded', 'purgeExpired did not report every expired record it deleted', purged).toBeGreaterThanOrEqual(purgeable ? doomed.length : 0);
      if (purgeable) {
        for (const scope of doomed) must('store.purge.bounded', 'an expired record survived purgeExpired', await raw(store, scope)).toBeUndefined();
      }
      must('store.purge.live', 'purgeExpired deleted a live in-progress record', (await store.get(kept))?.state).toBe('in_progress');
      must('store.purge.live', 'purgeExpired deleted a live outcome', (await store.get(done))?.state).toBe('succeeded');
    });
  });
}
