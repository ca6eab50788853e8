import type { Clock, IdempotencyStore, Scope, StoredResponse } from '@oncely/core';
import type { ClaimInput, ClaimResult, CompleteInput, FenceResult, LeaseInput } from '@oncely/core/adapter';

/** A bug a store could have: each one is a single change to {@link referenceStore}. */
export type Bug =
  | 'check-then-insert'
  | 'read-then-update-takeover'
  | 'same-fence'
  | 'takeover-flag-false'
  | 'takeover-keeps-retention'
  | 'takeover-resets-created-at'
  | 'takeover-any-fingerprint'
  | 'takeover-while-held'
  | 'lease-in-seconds'
  | 'expired-keeps-fence'
  | 'expired-reuses-fence'
  | 'never-expires'
  | 'joined-scope'
  | 'ignores-principal'
  | 'ignores-token'
  | 'complete-lapsed-owner'
  | 'complete-ignores-retention'
  | 'complete-overwrites-outcome'
  | 'complete-drops-resource-id'
  | 'complete-check-then-write'
  | 'complete-upserts-absent'
  | 'release-by-anyone'
  | 'release-lapsed-owner'
  | 'release-keeps-record'
  | 'release-deletes-outcome'
  | 'release-check-then-delete'
  | 'extend-lapsed-owner'
  | 'extend-keeps-retention'
  | 'extend-noop'
  | 'extend-check-then-write'
  | 'purge-ignores-limit'
  | 'purge-deletes-live';

interface Row {
  scope: Scope;
  fingerprint: string;
  state: 'in_progress' | 'succeeded' | 'failed_final';
  token: string;
  fence: number;
  lease: number;
  expires: number;
  created: number;
  response?: StoredResponse;
}

/**
 * A round trip between a read and the write that acts on it: where non-atomic stores lose races. 25 ms,
 * so that a loaded host still starts the suite's late contenders inside it (at 5 ms a mutant slipped by).
 */
const roundTrip = () => new Promise((resolve) => setTimeout(resolve, 25));

/**
 * A small store written from scratch, independently of core's memory store, on an injected clock:
 * correct unless told to carry one bug. Each `bug === …` below is the one place that bug lives.
 */
export function referenceStore(clock: Pick<Clock, 'now'>, bug?: Bug): IdempotencyStore {
  const rows = new Map<string, Row>();
  const id = (s: Scope) =>
    bug === 'joined-scope'
      ? `${s.tenant}:${s.principal}:${s.operation}:${s.key}`
      : JSON.stringify([s.tenant, bug === 'ignores-principal' ? '' : s.principal, s.operation, s.key]);
  const live = (s: Scope) => {
    const row = rows.get(id(s));
    return row && (bug === 'never-expires' || row.expires > clock.now()) ? row : undefined;
  };
  /** The row `input.token` holds, if it does; `lapsedOk` is a bug's way in for a lapsed owner. */
  const held = (input: LeaseInput, lapsedOk = false) => {
    const row = live(input.scope);
    if (row?.state !== 'in_progress') return undefined;
    if (bug === 'ignores-token') return row;
    return row.token === input.token && (lapsedOk || row.lease > clock.now()) ? row : undefined;
  };
  const record = (row: Row) => ({
    scope: { ...row.scope },
    fingerprint: row.fingerprint,
    state: row.state,
    fence: row.fence,
    ...(row.state === 'in_progress'
      ? { leaseRemainingMs: Math.max(0, row.lease - clock.now()) }
      : { response: JSON.parse(JSON.stringify(row.response)) as StoredResponse }),
    createdAt: new Date(row.created),
    expiresAt: new Date(row.expires),
  });

  return {
    name: `reference(${bug ?? 'correct'})`,
    capabilities: { transactions: false, nativeTtl: false },

    async claim(input: ClaimInput): Promise<ClaimResult> {
      let row = live(input.scope);
      if (bug === 'check-then-insert' && !row) {
        await roundTrip();
      } else if (bug === 'read-then-update-takeover' && row && row.lease <= clock.now()) {
        await roundTrip();
      } else {
        row = live(input.scope);
      }
      const now = clock.now();
      const lapsed =
        row?.state === 'in_progress' &&
        (bug === 'takeover-while-held' || row.lease <= now) &&
        (bug === 'takeover-any-fingerprint' || row.fingerprint === input.fingerprint);
      if (row && !lapsed) return { kind: 'existing', record: record(row) };
      const stored = rows.get(id(input.scope));
      const expired = !row && stored !== undefined;
      const expiredFence = { 'expired-keeps-fence': (stored?.fence ?? 0) + 1, 'expired-reuses-fence': stored?.fence ?? 1 } as Partial<Record<Bug, number>>;
      const fence = row ? (bug === 'same-fence' ? row.fence : row.fence + 1) : ((expired && bug && expiredFence[bug]) || 1);
      const lease = now + input.leaseMs * (bug === 'lease-in-seconds' ? 1000 : 1);
      rows.set(id(input.scope), {
        scope: { ...input.scope },
        fingerprint: input.fingerprint,
        state: 'in_progress',
        token: input.token,
        fence,
        lease,
        expires: row && bug === 'takeover-keeps-retention' ? row.expires : Math.max(lease, now + input.retentionMs),
        created: row && bug !== 'takeover-resets-created-at' ? row.created : now,
      });
      return { kind: 'claimed', fence, takeover: row !== undefined && bug !== 'takeover-flag-false' };
    },

    async complete(input: CompleteInput): Promise<FenceResult> {
      const row = bug === 'complete-overwrites-outcome' ? live(input.scope) : held(input, bug === 'complete-lapsed-owner');
      const outcome = { state: input.state, response: JSON.parse(JSON.stringify(input.response)) as StoredResponse };
      if (bug === 'complete-drops-resource-id') delete (outcome.response as { resourceId?: string }).resourceId;
      if (!row && bug === 'complete-upserts-absent' && !live(input.scope)) {
        const now = clock.now();
        rows.set(id(input.scope), { scope: input.scope, fingerprint: '', token: input.token, fence: 1, lease: now, created: now, expires: now + input.retentionMs, ...outcome });
        return 'ok';
      }
      if (!row || (bug === 'complete-overwrites-outcome' && row.token !== input.token)) return 'fence_lost';
      if (bug === 'complete-check-then-write') {
        // Writes whatever the key holds by now, and answers ok even when it holds nothing.
        await roundTrip();
        const latest = rows.get(id(input.scope));
        if (latest) Object.assign(latest, outcome, { token: input.token, fence: row.fence, expires: clock.now() + input.retentionMs });
        return 'ok';
      }
      Object.assign(row, outcome, { expires: bug === 'complete-ignores-retention' ? row.expires : clock.now() + input.retentionMs });
      return 'ok';
    },

    async release(input: LeaseInput): Promise<FenceResult> {
      const row =
        bug === 'release-by-anyone'
          ? live(input.scope)
          : bug === 'release-deletes-outcome'
            ? [live(input.scope)].find((r) => r?.token === input.token && (r.state !== 'in_progress' || r.lease > clock.now()))
            : held(input, bug === 'release-lapsed-owner');
      if (!row || (bug === 'release-by-anyone' && row.state !== 'in_progress')) return 'fence_lost';
      if (bug === 'release-check-then-delete') await roundTrip();
      if (bug === 'release-keeps-record') row.lease = clock.now();
      else rows.delete(id(input.scope));
      return 'ok';
    },

    async extend(input: LeaseInput & { readonly leaseMs: number }): Promise<FenceResult> {
      const row = held(input, bug === 'extend-lapsed-owner');
      if (!row) return 'fence_lost';
      if (bug === 'extend-check-then-write') {
        await roundTrip();
        const latest = rows.get(id(input.scope));
        const lease = clock.now() + input.leaseMs;
        if (latest) Object.assign(latest, { state: 'in_progress', token: row.token, fence: row.fence, lease, expires: Math.max(latest.expires, lease) });
        return 'ok';
      }
      const lease = clock.now() + input.leaseMs;
      if (bug !== 'extend-noop') row.lease = lease;
      if (bug !== 'extend-keeps-retention') row.expires = Math.max(row.expires, lease);
      return 'ok';
    },

    async get(scope: Scope) {
      const row = live(scope);
      return row && record(row);
    },

    async purgeExpired(limit: number) {
      let purged = 0;
      for (const [key, row] of rows) {
        if (bug !== 'purge-ignores-limit' && purged >= limit) break;
        if (bug === 'never-expires' || (bug !== 'purge-deletes-live' && row.expires > clock.now())) continue;
        rows.delete(key);
        purged++;
      }
      return purged;
    },

    async close() {},
  };
}
