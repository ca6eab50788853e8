import type { Scope } from '@oncely/core';
import type { ClaimInput, CompleteInput } from '@oncely/core/adapter';
import type { Document } from 'mongodb';
import { encodeScopeId } from './scope-id.js';
import { fromNow, literal, NOW } from '../expressions/server-time.js';

// Every filter and pipeline the idempotency store sends lives here, so the protocol reads in one place.
// Time is always `$$NOW`, the server's clock; caller values always go through `$literal`, so a string
// such as "$$ROOT" stays a string.

/** One `$switch` branch. */
// biome-ignore lint/suspicious/noThenProperty: MongoDB's $switch names a branch's result "then"
export const branch = (when: unknown, result: unknown) => ({ case: when, then: result });
/** True while `field` (a date) lies in the server's future. */
const running = (field: string) => ({ $gt: [`$${field}`, NOW] });

/** What `claim` and `get` return: the stored fields plus the lease remainder on the server's clock. */
export const READ_PROJECTION: Document = {
  fingerprint: 1,
  state: 1,
  fence: 1,
  token: 1,
  response: 1,
  createdAt: 1,
  expiresAt: 1,
  leaseRemainingMs: { $max: [0, { $subtract: ['$leaseExpiresAt', NOW] }] },
};

/** A pure `_id` equality: the server retries the duplicate-key race of concurrent upserts on it. */
export function idFilter(scope: Scope): { _id: string } {
  return { _id: encodeScopeId(scope) };
}

/**
 * The claim-or-read as one `findOneAndUpdate`: upsert on the `_id` and an update pipeline that
 * decides on the server. The record is (re)written when it is absent or expired (`fresh`, fence 1)
 * or when it is in progress with a lapsed lease and the same fingerprint (`takeover`, fence + 1,
 * creation time kept); otherwise the pipeline returns the document unchanged (`keep`).
 */
export function claimCommand(input: ClaimInput): {
  filter: { _id: string };
  update: Document[];
  options: { upsert: true; returnDocument: 'after'; projection: Document; includeResultMetadata: false };
} {
  const decision = {
    $switch: {
      branches: [
        // An upserted document has only its `_id`, so it counts as expired too.
        branch({ $not: [running('expiresAt')] }, 'fresh'),
        branch(
          {
            $and: [
              { $eq: ['$state', 'in_progress'] },
              { $not: [running('leaseExpiresAt')] },
              { $eq: ['$fingerprint', literal(input.fingerprint)] },
            ],
          },
          'takeover',
        ),
      ],
      default: 'keep',
    },
  };
  const owned = (fence: unknown, createdAt: unknown) => ({
    _id: '$_id',
    fingerprint: literal(input.fingerprint),
    state: literal('in_progress'),
    fence,
    token: literal(input.token),
    leaseExpiresAt: fromNow(input.leaseMs),
    createdAt,
    expiresAt: fromNow(input.retentionMs),
  });
  const replacement = {
    $let: {
      vars: { decision },
      in: {
        $switch: {
          branches: [
            branch({ $eq: ['$$decision', 'fresh'] }, owned(literal(1), NOW)),
            branch({ $eq: ['$$decision', 'takeover'] }, owned({ $add: ['$fence', literal(1)] }, '$createdAt')),
          ],
          default: '$$ROOT',
        },
      },
    },
  };
  return {
    filter: idFilter(input.scope),
    update: [{ $replaceWith: replacement }],
    options: { upsert: true, returnDocument: 'after', projection: READ_PROJECTION, includeResultMetadata: false },
  };
}

/**
 * Matches the record only while `token` holds it. In lease mode the lease and the retention must
 * still run by the server's clock; inside a transaction the transaction itself guards the record.
 */
export function ownedFilter(scope: Scope, token: string, mode: 'lease' | 'transaction'): Document {
  const filter: Document = { ...idFilter(scope), token, state: 'in_progress' };
  if (mode === 'lease') filter.$expr = { $and: [running('leaseExpiresAt'), running('expiresAt')] };
  return filter;
}

/** Stores a terminal outcome (as JSON text) and restarts retention; the lease fields go. */
export function completeUpdate(input: Pick<CompleteInput, 'state' | 'response' | 'retentionMs'>): Document[] {
  return [
    {
      $set: {
        state: literal(input.state),
        response: literal(JSON.stringify(input.response)),
        expiresAt: fromNow(input.retentionMs),
      },
    },
    { $unset: ['token', 'leaseExpiresAt'] },
  ];
}

/** Renews the lease for `leaseMs` from now, stretching retention if the lease would outlive it. */
export function extendUpdate(leaseMs: number): Document[] {
  return [{ $set: { leaseExpiresAt: fromNow(leaseMs), expiresAt: { $max: ['$expiresAt', fromNow(leaseMs)] } } }];
}

/** A record that has not expired: expired records are absent before the TTL monitor removes them. */
export function liveFilter(scope: Scope): Document {
  return { ...idFilter(scope), $expr: running('expiresAt') };
}

/**
 * Records whose retention has ended by the server's clock. A bare field compared with `$$NOW`, which
 * the planner folds to a constant: from MongoDB 5.0 it bounds the scan of the `expiresAt` index at
 * now. The same test written as `$not` of "still running" gives the planner no bounds, so a purge
 * that finds fewer than `limit` expired records would walk the whole index.
 */
export const EXPIRED_FILTER: Document = { $expr: { $lte: ['$expiresAt', NOW] } };

/** The TTL index: the server deletes a document once `expiresAt` has passed. */
export const TTL_INDEX = {
  key: { expiresAt: 1 },
  options: { name: 'oncely_expires_at_ttl', expireAfterSeconds: 0 },
} as const;

/** The oldest expired records first, along the TTL index, at most `limit` of them. */
export function purgeCandidates(limit: number): { filter: Document; options: { projection: Document; sort: Document; limit: number } } {
  return { filter: EXPIRED_FILTER, options: { projection: { _id: 1 }, sort: { expiresAt: 1 }, limit } };
}

/** Deletes the candidates that are still expired: one claimed again in between is kept. */
export function purgeFilter(ids: readonly string[]): Document {
  return { _id: { $in: [...ids] }, ...EXPIRED_FILTER };
}
