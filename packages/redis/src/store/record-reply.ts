import type { ClaimResult, IdempotencyRecord, RecordState, Scope, StoredResponse } from '@oncely/core';

const STATES: readonly RecordState[] = ['in_progress', 'succeeded', 'failed_final'];

/** A reply this code did not write: refuse it rather than guess (fail closed). */
const unexpected = (what: string, reply: unknown) =>
  new Error(`unexpected ${what} reply from Redis: ${JSON.stringify(reply)?.slice(0, 200)}`);

const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

/**
 * Reads `{'existing', state, fingerprint, fence, leaseRemainingMs|-1, createdAt, expiresAt, response|''}`,
 * the record shape `claim.lua` and `get.lua` both return.
 */
export function toRecord(scope: Scope, reply: unknown): IdempotencyRecord {
  if (!Array.isArray(reply) || reply.length !== 8 || reply[0] !== 'existing') throw unexpected('record', reply);
  const [, state, fingerprint, fence, leaseRemainingMs, createdAt, expiresAt, response] = reply as unknown[];
  if (
    !STATES.includes(state as RecordState) ||
    typeof fingerprint !== 'string' ||
    !isInteger(fence) ||
    !isInteger(leaseRemainingMs) ||
    !isInteger(createdAt) ||
    !isInteger(expiresAt) ||
    typeof response !== 'string'
  ) {
    throw unexpected('record', reply);
  }
  const base = { scope, fingerprint, state: state as RecordState, fence, createdAt: new Date(createdAt), expiresAt: new Date(expiresAt) };
  if (state === 'in_progress') return { ...base, leaseRemainingMs };
  return { ...base, response: JSON.parse(response) as StoredResponse };
}

/** Reads the reply of `claim.lua`: `{'claimed', fence, takeover}` or a record. */
export function toClaimResult(scope: Scope, reply: unknown): ClaimResult {
  if (Array.isArray(reply) && reply[0] === 'claimed') {
    const [, fence, takeover] = reply as unknown[];
    if (reply.length !== 3 || !isInteger(fence) || (takeover !== 0 && takeover !== 1)) throw unexpected('claim', reply);
    return { kind: 'claimed', fence, takeover: takeover === 1 };
  }
  return { kind: 'existing', record: toRecord(scope, reply) };
}

/** What `complete.lua` answered: stored, refused, or already stored by this same token. */
export type CompleteReply = 'stored' | 'fence_lost' | 'completed_by_token';

/** Reads the reply of `complete.lua`. */
export function toCompleteReply(reply: unknown): CompleteReply {
  if (reply === 1) return 'stored';
  if (reply === 0) return 'fence_lost';
  if (reply === 2) return 'completed_by_token';
  throw unexpected('complete', reply);
}

/** Reads the 1/0 reply of `release.lua` and `extend.lua`. */
export function toFenceResult(reply: unknown): 'ok' | 'fence_lost' {
  if (reply === 1) return 'ok';
  if (reply === 0) return 'fence_lost';
  throw unexpected('compare-and-set', reply);
}
