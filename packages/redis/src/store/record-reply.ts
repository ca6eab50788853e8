import type { IdempotencyRecord, Scope, StoredResponse, TerminalState } from '@oncely/core';
import { type ClaimInput, type ClaimResult, corruptRecord } from '@oncely/core/adapter';

/** Every stored record is a JSON object whose first member is its state (see `record.lua`). */
const IN_PROGRESS = '{"state":"in_progress"';

/** A reply this code did not write: refuse it rather than guess (fail closed, as `corrupt_record`). */
const unexpected = (what: string, reply: unknown) =>
  corruptRecord(`unexpected ${what} reply from Redis: ${JSON.stringify(reply)?.slice(0, 200)}`);

const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

/**
 * The record a fresh claim writes with `SET NX`: its times are relative (`ttlMs` is the key's
 * expiry), because only the Redis server's clock may say when a lease ends.
 */
export function freshClaimJson(input: ClaimInput, ttlMs: number): string {
  return `${IN_PROGRESS},"fence":1,"token":${jsonString(input.token)},"fingerprint":${jsonString(input.fingerprint)},"leaseMs":${input.leaseMs},"ttlMs":${ttlMs}}`;
}

/** Characters a JSON string may hold as they are: the engine's lease tokens and hex fingerprints. */
const PLAIN = /^[\w.-]*$/;

/** `JSON.stringify` of a string, without calling it for the plain ones. */
const jsonString = (text: string): string => (PLAIN.test(text) ? `"${text}"` : JSON.stringify(text));

/** True for a record whose lease only the server can judge (the claim script takes it from there). */
export const isInProgress = (json: string): boolean => json.startsWith(IN_PROGRESS);

/** Reads one stored record (absolute times, as the scripts answer it) with its remaining lease. */
export function toRecord(scope: Scope, json: unknown, leaseRemainingMs: unknown): IdempotencyRecord {
  let record: StoredRecord | null = null;
  try {
    if (typeof json === 'string') record = JSON.parse(json);
  } catch {
    // Not JSON: refused just below, like any other record this store did not write.
  }
  if (typeof record !== 'object' || record === null) throw unexpected('record', json);
  const { state, fingerprint, fence, createdAt, expiresAt } = record;
  const valid =
    typeof fingerprint === 'string' &&
    isInteger(fence) &&
    isInteger(createdAt) &&
    isInteger(expiresAt) &&
    isInteger(leaseRemainingMs) &&
    (state === 'in_progress' ? leaseRemainingMs >= 0 : (state === 'succeeded' || state === 'failed_final') && isStoredResponse(record.response));
  if (!valid) throw unexpected('record', json);
  return state === 'in_progress'
    ? { scope, fingerprint, state, fence, createdAt: new Date(createdAt), expiresAt: new Date(expiresAt), leaseRemainingMs }
    : { scope, fingerprint, state: state as TerminalState, fence, createdAt: new Date(createdAt), expiresAt: new Date(expiresAt), response: record.response as StoredResponse };
}

/** A record as JSON.parse gives it back, before any member is checked. */
interface StoredRecord {
  readonly state?: unknown;
  readonly fingerprint?: unknown;
  readonly fence?: unknown;
  readonly createdAt?: unknown;
  readonly expiresAt?: unknown;
  readonly response?: unknown;
}

const isStoredResponse = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && isInteger((value as { status?: unknown }).status);

/** Reads `{'existing', recordJson, leaseRemainingMs}`, the shape `claim.lua` and `get.lua` answer. */
export function toExisting(scope: Scope, reply: unknown): IdempotencyRecord {
  if (!Array.isArray(reply) || reply.length !== 3 || reply[0] !== 'existing') throw unexpected('record', reply);
  return toRecord(scope, reply[1], reply[2]);
}

/** Reads the reply of `claim.lua`: `{'claimed', fence, takeover}` or a record. */
export function toClaimResult(scope: Scope, reply: unknown): ClaimResult {
  if (Array.isArray(reply) && reply[0] === 'claimed') {
    const [, fence, takeover] = reply as unknown[];
    if (reply.length !== 3 || !isInteger(fence) || (takeover !== 0 && takeover !== 1)) throw unexpected('claim', reply);
    return { kind: 'claimed', fence, takeover: takeover === 1 };
  }
  return { kind: 'existing', record: toExisting(scope, reply) };
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
