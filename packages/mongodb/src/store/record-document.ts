import type { IdempotencyRecord, RecordState, StoredResponse } from '@oncely/core';
import { type ClaimResult, corruptRecord } from '@oncely/core/adapter';
import { decodeScopeId } from './scope-id.js';

/** One idempotency record as it sits in the collection. */
export interface IdempotencyDocument {
  /** {@link encodeScopeId} of the scope. */
  readonly _id: string;
  readonly fingerprint: string;
  readonly state: RecordState;
  /** Fencing counter: 1 for the first owner, +1 at every takeover. */
  readonly fence: number;
  /** Lease token of the current owner; in-progress records only. */
  readonly token?: string;
  /** When the lease lapses, by the server's clock; in-progress records only. */
  readonly leaseExpiresAt?: Date;
  /** The stored response as JSON text; terminal records only. */
  readonly response?: string;
  readonly createdAt: Date;
  /** Retention end; the TTL index removes the document some time after it. */
  readonly expiresAt: Date;
}

/** A document as `claim` and `get` read it: the server adds how long the lease still runs. */
export interface ReadDocument extends IdempotencyDocument {
  readonly leaseRemainingMs?: unknown;
}

const STATES: readonly RecordState[] = ['in_progress', 'succeeded', 'failed_final'];

/** Numbers may come back as `Long` or `bigint` when the client changed its BSON promotion options. */
export function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'object' && value !== null && typeof (value as { toNumber?: unknown }).toNumber === 'function') {
    return (value as { toNumber(): number }).toNumber();
  }
  throw corruptRecord(`expected a number, got ${String(value)}`);
}

/** Turns a stored document into the record the core contract reports; rejects what it cannot trust. */
export function toRecord(document: ReadDocument): IdempotencyRecord {
  if (!STATES.includes(document.state)) {
    throw corruptRecord(`the record ${document._id} has the unknown state ${String(document.state)}`);
  }
  const base = {
    scope: decodeScopeId(document._id),
    fingerprint: document.fingerprint,
    state: document.state,
    fence: toNumber(document.fence),
    createdAt: document.createdAt,
    expiresAt: document.expiresAt,
  };
  if (document.state === 'in_progress') {
    return { ...base, leaseRemainingMs: Math.max(0, toNumber(document.leaseRemainingMs ?? 0)) };
  }
  return document.response === undefined
    ? base
    : { ...base, response: parseResponse(document) };
}

/** The stored response as JSON text; text that does not parse was not written by this store. */
function parseResponse(document: ReadDocument): StoredResponse {
  try {
    return JSON.parse(document.response!) as StoredResponse;
  } catch {
    throw corruptRecord(`the record ${document._id} holds a response that is not JSON`);
  }
}

/** Reads the document a claim returned: the caller's token on an in-progress record means it now owns the key. */
export function toClaimResult(document: ReadDocument | null, token: string): ClaimResult {
  if (!document) throw corruptRecord('the claim returned no document');
  if (document.state === 'in_progress' && document.token === token) {
    const fence = toNumber(document.fence);
    // A fresh claim always starts at fence 1, so a higher fence can only come from a takeover.
    return { kind: 'claimed', fence, takeover: fence > 1 };
  }
  return { kind: 'existing', record: toRecord(document) };
}
