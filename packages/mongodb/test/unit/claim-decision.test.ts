import type { Scope } from '@oncely/core';
import fc from 'fast-check';
import { Aggregator } from 'mingo';
import { describe, expect, it } from 'vitest';
import { claimCommand, completeUpdate, EXPIRED_FILTER, extendUpdate, liveFilter, ownedFilter, purgeFilter } from '../../src/store/queries.js';
import { type IdempotencyDocument, type ReadDocument, toClaimResult } from '../../src/store/record-document.js';
import { encodeScopeId } from '../../src/store/scope-id.js';
import { applyUpdate, at, freezeNow, matches, NOW } from '../support/mingo.js';

// These tests run the generated pipelines and filters through mingo, a JavaScript implementation of
// MongoDB's query and expression language. mingo is not MongoDB: this proves the decision logic we
// wrote (the same rules as the core memory store), not the server's behaviour. The real-server suite
// (MONGODB_URL) proves the latter.

const scope: Scope = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k' };
const _id = encodeScopeId(scope);

freezeNow();

const offset = fc.oneof(fc.constant(0), fc.integer({ min: -5_000, max: 5_000 }));
const prior: fc.Arbitrary<IdempotencyDocument | undefined> = fc.option(
  fc.oneof(
    fc.record({
      state: fc.constant('in_progress' as const),
      fingerprint: fc.constantFrom('a', 'b'),
      fence: fc.integer({ min: 1, max: 5 }),
      token: fc.constant('old-token'),
      lease: offset,
      retention: offset,
    }).map(({ lease, retention, ...rest }) => ({ _id, ...rest, leaseExpiresAt: at(lease), createdAt: at(-60_000), expiresAt: at(Math.max(lease, retention)) })),
    fc.record({
      state: fc.constantFrom('succeeded' as const, 'failed_final' as const),
      fingerprint: fc.constantFrom('a', 'b'),
      fence: fc.integer({ min: 1, max: 5 }),
      retention: offset,
    }).map(({ retention, ...rest }) => ({ _id, ...rest, response: '{"status":201}', createdAt: at(-60_000), expiresAt: at(retention) })),
  ),
  { nil: undefined },
);
const claim = fc.record({ fingerprint: fc.constantFrom('a', 'b'), leaseMs: fc.integer({ min: 1, max: 60_000 }), retentionMs: fc.integer({ min: 60_000, max: 90_000_000 }) });

/** What an upsert hands the pipeline: the stored document, or just the `_id` from the filter. */
const runUpdate = (pipeline: object[], document: object | undefined) => applyUpdate<IdempotencyDocument>(pipeline, document ?? { _id });

describe('claim decision table (mingo evaluation, not MongoDB)', () => {
  it('claims absent or expired records, takes over lapsed same-fingerprint leases, and otherwise changes nothing (property)', () => {
    fc.assert(
      fc.property(prior, claim, (existing, input) => {
        const command = claimCommand({ scope, token: 'new-token', ...input });
        const after = runUpdate(command.update, existing);
        const live = existing !== undefined && existing.expiresAt > NOW;
        const lapsedSame = live && existing.state === 'in_progress' && existing.leaseExpiresAt! <= NOW && existing.fingerprint === input.fingerprint;
        const owned = {
          _id,
          fingerprint: input.fingerprint,
          state: 'in_progress',
          token: 'new-token',
          leaseExpiresAt: at(input.leaseMs),
          expiresAt: at(input.retentionMs),
        };
        if (!live) expect(after).toEqual({ ...owned, fence: 1, createdAt: NOW });
        else if (lapsedSame) expect(after).toEqual({ ...owned, fence: existing.fence + 1, createdAt: existing.createdAt });
        else expect(after).toEqual(existing);

        const projected = new Aggregator([{ $project: command.options.projection }] as never).run([after])[0] as unknown as ReadDocument;
        const result = toClaimResult(projected, 'new-token');
        expect(result.kind).toBe(!live || lapsedSame ? 'claimed' : 'existing');
        if (result.kind === 'claimed') expect(result.takeover).toBe(lapsedSame);
        if (result.kind === 'existing' && existing?.state === 'in_progress') {
          expect(result.record.leaseRemainingMs).toBe(Math.max(0, existing.leaseExpiresAt!.getTime() - NOW.getTime()));
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it('complete, release and extend match only the token holding a running lease on a live record (property)', () => {
    fc.assert(
      fc.property(prior, fc.constantFrom('old-token', 'other-token'), (existing, token) => {
        fc.pre(existing !== undefined);
        const document = existing!;
        const holds =
          document.state === 'in_progress' && document.token === token && document.leaseExpiresAt! > NOW && document.expiresAt > NOW;
        expect(matches(ownedFilter(scope, token, 'lease'), document)).toBe(holds);
        expect(matches(ownedFilter(scope, token, 'transaction'), document)).toBe(document.state === 'in_progress' && document.token === token);
        expect(matches(liveFilter(scope), document)).toBe(document.expiresAt > NOW);
      }),
      { numRuns: 500 },
    );
  });

  it('purge matches exactly the records whose retention has ended, and re-checks it in the delete (property)', () => {
    fc.assert(
      fc.property(prior, (existing) => {
        fc.pre(existing !== undefined);
        const expired = existing!.expiresAt <= NOW;
        expect(matches(EXPIRED_FILTER, existing!)).toBe(expired);
        expect(matches(purgeFilter([_id]), existing!)).toBe(expired);
        expect(matches(purgeFilter(['other']), existing!)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('complete writes the outcome and a new retention and removes the lease fields', () => {
    const held = { _id, fingerprint: 'a', state: 'in_progress', fence: 2, token: 't', leaseExpiresAt: at(1_000), createdAt: at(-5), expiresAt: at(1_000) };
    const response = { status: 201, body: { id: 'pay_1' } };
    expect(runUpdate(completeUpdate({ state: 'succeeded', response, retentionMs: 50_000 }), held)).toEqual({
      _id,
      fingerprint: 'a',
      state: 'succeeded',
      fence: 2,
      response: JSON.stringify(response),
      createdAt: at(-5),
      expiresAt: at(50_000),
    });
  });

  it('extend moves the lease and stretches retention only when the lease would outlive it', () => {
    const held = { _id, state: 'in_progress', token: 't', leaseExpiresAt: at(1_000), expiresAt: at(10_000) };
    expect(runUpdate(extendUpdate(5_000), held)).toMatchObject({ leaseExpiresAt: at(5_000), expiresAt: at(10_000) });
    expect(runUpdate(extendUpdate(20_000), held)).toMatchObject({ leaseExpiresAt: at(20_000), expiresAt: at(20_000) });
  });
});
