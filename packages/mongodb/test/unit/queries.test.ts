import type { Scope } from '@oncely/core';
import type { ClaimInput } from '@oncely/core/adapter';
import { Long } from 'mongodb';
import { describe, expect, it } from 'vitest';
import {
  claimCommand,
  completeUpdate,
  EXPIRED_FILTER,
  extendUpdate,
  liveFilter,
  ownedFilter,
  purgeCandidates,
  purgeFilter,
  READ_PROJECTION,
  TTL_INDEX,
} from '../../src/store/queries.js';
import { toClaimResult, toRecord } from '../../src/store/record-document.js';
import { encodeScopeId } from '../../src/store/scope-id.js';

const scope: Scope = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k-1' };
// Hostile values: if any reached the pipeline unquoted, MongoDB would read them as field paths or variables.
const input: ClaimInput = { scope, fingerprint: '$hostile.path', token: '$$REMOVE', leaseMs: 30_000, retentionMs: 86_400_000 };

/** Every node of a command, with the key it sits under. */
function* walk(node: unknown, key = ''): Generator<{ key: string; value: unknown }> {
  yield { key, value: node };
  if (Array.isArray(node)) for (const item of node) yield* walk(item, key);
  else if (typeof node === 'object' && node !== null) for (const [k, v] of Object.entries(node)) yield* walk(v, k);
}
const nodes = (command: unknown) => [...walk(command)];

const COMPARISONS = new Set(['$lt', '$lte', '$gt', '$gte', '$eq']);
/** A value the planner treats as a constant: a literal, or `$$NOW` (which it folds). */
const constant = (value: unknown): boolean => value === '$$NOW' || value instanceof Date || typeof value === 'number';
/**
 * Whether the planner can turn `filter` into index bounds on `field`: a query predicate on it, or an
 * `$expr` that is one comparison between the bare field path and a constant.
 */
function indexBounded(filter: Record<string, unknown>, field: string): boolean {
  if (field in filter) return true;
  const expr = filter.$expr as Record<string, unknown> | undefined;
  const [operator, args] = Object.entries(expr ?? {})[0] ?? [];
  if (!operator || !COMPARISONS.has(operator) || !Array.isArray(args) || args.length !== 2) return false;
  return args[0] === `$${field}` && constant(args[1]);
}

describe('claim command', () => {
  const command = claimCommand(input);

  it('filters on the _id alone, so the server retries the upsert race', () => {
    expect(command.filter).toEqual({ _id: encodeScopeId(scope) });
  });

  it('upserts, returns the document after the update and projects the lease remainder', () => {
    expect(command.options).toEqual({ upsert: true, returnDocument: 'after', projection: READ_PROJECTION, includeResultMetadata: false });
  });

  it('is one aggregation-pipeline stage that replaces the document or returns it unchanged', () => {
    expect(command.update).toHaveLength(1);
    expect(Object.keys(command.update[0]!)).toEqual(['$replaceWith']);
    const keep = nodes(command.update).filter((n) => n.key === 'default' && n.value === '$$ROOT');
    expect(keep).toHaveLength(1);
  });

  it('judges time only by the server clock: $$NOW, never a date from this process', () => {
    const all = nodes(command);
    expect(all.some((n) => n.value instanceof Date)).toBe(false);
    expect(all.filter((n) => n.value === '$$NOW').length).toBeGreaterThanOrEqual(4);
    expect(all.some((n) => typeof n.value === 'number' && n.value > 1e12)).toBe(false);
  });

  it('quotes every caller value with $literal', () => {
    const all = nodes(command.update);
    for (const value of [input.fingerprint, input.token, input.leaseMs, input.retentionMs]) {
      const hits = all.filter((n) => n.value === value);
      expect(hits.length).toBeGreaterThan(0);
      for (const hit of hits) expect(hit.key).toBe('$literal');
    }
  });

  it('takes over only an in-progress record whose lease lapsed and whose fingerprint matches', () => {
    const branches = nodes(command.update).find((n) => n.key === 'vars')!.value as {
      decision: { $switch: { branches: { case: unknown; then: string }[] } };
    };
    const takeover = branches.decision.$switch.branches.find((b) => b.then === 'takeover')!;
    expect(takeover.case).toEqual({
      $and: [
        { $eq: ['$state', 'in_progress'] },
        { $not: [{ $gt: ['$leaseExpiresAt', '$$NOW'] }] },
        { $eq: ['$fingerprint', { $literal: input.fingerprint }] },
      ],
    });
    const fresh = branches.decision.$switch.branches.find((b) => b.then === 'fresh')!;
    expect(fresh.case).toEqual({ $not: [{ $gt: ['$expiresAt', '$$NOW'] }] });
  });

  it('a fresh claim starts at fence 1; a takeover adds one to the fence and keeps the creation time', () => {
    const written = nodes(command.update).filter((n) => n.key === 'then' && typeof n.value === 'object') as {
      value: Record<string, unknown>;
    }[];
    const [fresh, takeover] = written.map((n) => n.value);
    expect(fresh).toMatchObject({ _id: '$_id', fence: { $literal: 1 }, createdAt: '$$NOW', token: { $literal: '$$REMOVE' } });
    expect(takeover).toMatchObject({ _id: '$_id', fence: { $add: ['$fence', { $literal: 1 }] }, createdAt: '$createdAt' });
    for (const doc of [fresh, takeover]) {
      expect(doc!.leaseExpiresAt).toEqual({ $add: ['$$NOW', { $literal: 30_000 }] });
      expect(doc!.expiresAt).toEqual({ $add: ['$$NOW', { $literal: 86_400_000 }] });
      expect(doc!.state).toEqual({ $literal: 'in_progress' });
    }
  });
});

describe('compare-and-set filters and updates', () => {
  it('in lease mode the token must hold a running lease on a live record', () => {
    expect(ownedFilter(scope, 'tok', 'lease')).toEqual({
      _id: encodeScopeId(scope),
      token: 'tok',
      state: 'in_progress',
      $expr: { $and: [{ $gt: ['$leaseExpiresAt', '$$NOW'] }, { $gt: ['$expiresAt', '$$NOW'] }] },
    });
  });

  it('inside a transaction the token and state suffice: the transaction guards the record', () => {
    expect(ownedFilter(scope, 'tok', 'transaction')).toEqual({ _id: encodeScopeId(scope), token: 'tok', state: 'in_progress' });
  });

  it('complete stores the response as JSON text, so keys BSON restricts survive, and drops the lease', () => {
    const response = { status: 201, headers: { 'x.trace': '1' }, body: { $set: 1, 'a.b': [1, 2.5, null], '': 'empty' } };
    const [set, unset] = completeUpdate({ state: 'succeeded', response, retentionMs: 1_000 });
    expect(set).toEqual({
      $set: {
        state: { $literal: 'succeeded' },
        response: { $literal: JSON.stringify(response) },
        expiresAt: { $add: ['$$NOW', { $literal: 1_000 }] },
      },
    });
    expect(JSON.parse((set as { $set: { response: { $literal: string } } }).$set.response.$literal)).toEqual(response);
    expect(unset).toEqual({ $unset: ['token', 'leaseExpiresAt'] });
  });

  it('extend renews the lease from now and never shortens retention', () => {
    expect(extendUpdate(5_000)).toEqual([
      {
        $set: {
          leaseExpiresAt: { $add: ['$$NOW', { $literal: 5_000 }] },
          expiresAt: { $max: ['$expiresAt', { $add: ['$$NOW', { $literal: 5_000 }] }] },
        },
      },
    ]);
  });
});

describe('reads, cleanup and indexes', () => {
  it('a read matches only a record whose retention still runs by the server clock', () => {
    expect(liveFilter(scope)).toEqual({ _id: encodeScopeId(scope), $expr: { $gt: ['$expiresAt', '$$NOW'] } });
  });

  it('purge walks the TTL index oldest first, at most limit records, and deletes only what is still expired', () => {
    expect(purgeCandidates(7)).toEqual({ filter: EXPIRED_FILTER, options: { projection: { _id: 1 }, sort: { expiresAt: 1 }, limit: 7 } });
    expect(purgeFilter(['a', 'b'])).toEqual({ _id: { $in: ['a', 'b'] }, ...EXPIRED_FILTER });
  });

  it('the purge filter gives the planner bounds on expiresAt: the bare field against $$NOW, no $not (bounded from MongoDB 5.0)', () => {
    // The planner rewrites `$expr: { $lte: ['$field', <constant>] }` into index bounds, and folds `$$NOW` to
    // a constant; a `$not` anywhere leaves it nothing to bound, so a purge with fewer than `limit` expired
    // records would walk every live record's key. The explain check of the first-run script shows it on a server.
    expect(indexBounded(purgeCandidates(7).filter, 'expiresAt')).toBe(true);
    expect(nodes(EXPIRED_FILTER).some((n) => n.key === '$not')).toBe(false);
    expect(indexBounded({ $expr: { $not: [{ $gt: ['$expiresAt', '$$NOW'] }] } }, 'expiresAt')).toBe(false);
  });

  it('the TTL index removes a document as soon as expiresAt has passed', () => {
    expect(TTL_INDEX).toEqual({ key: { expiresAt: 1 }, options: { name: 'oncely_expires_at_ttl', expireAfterSeconds: 0 } });
  });

  it('the read projection computes the lease remainder on the server', () => {
    expect(READ_PROJECTION.leaseRemainingMs).toEqual({ $max: [0, { $subtract: ['$leaseExpiresAt', '$$NOW'] }] });
  });
});

describe('reading documents back', () => {
  const at = new Date('2026-01-01T00:00:00Z');
  const held = { _id: encodeScopeId(scope), fingerprint: 'f', state: 'in_progress' as const, token: 'mine', createdAt: at, expiresAt: at };

  it('our token on an in-progress record is a claim; fence above 1 is a takeover', () => {
    expect(toClaimResult({ ...held, fence: 1 }, 'mine')).toEqual({ kind: 'claimed', fence: 1, takeover: false });
    expect(toClaimResult({ ...held, fence: 3 }, 'mine')).toEqual({ kind: 'claimed', fence: 3, takeover: true });
  });

  it("another token's record is reported as it stands, with the server's lease remainder", () => {
    const result = toClaimResult({ ...held, fence: Long.fromNumber(2) as unknown as number, leaseRemainingMs: Long.fromNumber(1_234) }, 'other');
    expect(result).toEqual({
      kind: 'existing',
      record: { scope, fingerprint: 'f', state: 'in_progress', fence: 2, leaseRemainingMs: 1_234, createdAt: at, expiresAt: at },
    });
  });

  it('a terminal record replays its parsed response and has no lease', () => {
    const response = { status: 201, body: { id: 'pay_1' } };
    const record = toRecord({ _id: encodeScopeId(scope), fingerprint: 'f', state: 'succeeded', fence: 1, response: JSON.stringify(response), createdAt: at, expiresAt: at, leaseRemainingMs: 0 });
    expect(record.response).toEqual(response);
    expect(record.leaseRemainingMs).toBeUndefined();
  });

  it('a document in an unknown state or without a claim answer fails instead of being guessed', () => {
    expect(() => toRecord({ ...held, fence: 1, state: 'done' as never })).toThrow(/unknown state/);
    expect(() => toClaimResult(null, 'mine')).toThrow(/no document/);
    expect(() => toClaimResult({ ...held, fence: 'one' as never }, 'mine')).toThrow(/number/);
  });
});
