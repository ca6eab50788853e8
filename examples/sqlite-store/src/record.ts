import type { IdempotencyRecord, Scope, StoredResponse } from '@oncely/core';
import { corruptRecord } from '@oncely/core/adapter';

/** A row as the store's `read` and `get` statements select it. */
export interface RecordRow {
  readonly fingerprint: string;
  readonly state: string;
  readonly fence: number;
  readonly response: string | null;
  readonly lease_remaining_ms: number | null;
  readonly created_ms: number;
  readonly expires_ms: number;
}

/**
 * The record the contract describes, from a row. A row this store could not have written (an
 * unknown state, a response that is not the JSON it stores) is a `corruptRecord`: inside the
 * storage guard it becomes a `StorageError` with code `corrupt_record`, and the engine fails closed.
 */
export function toRecord(scope: Scope, row: RecordRow): IdempotencyRecord {
  if (!Number.isSafeInteger(row.fence) || row.fence < 1) throw corruptRecord(`fence ${row.fence} is not a positive integer`);
  const base = {
    scope: { ...scope },
    fingerprint: row.fingerprint,
    fence: row.fence,
    createdAt: new Date(row.created_ms),
    expiresAt: new Date(row.expires_ms),
  };
  switch (row.state) {
    case 'in_progress':
      return { ...base, state: row.state, leaseRemainingMs: Math.max(0, row.lease_remaining_ms ?? 0) };
    case 'succeeded':
    case 'failed_final':
      return { ...base, state: row.state, response: toResponse(row.response) };
    default:
      throw corruptRecord(`unknown state ${JSON.stringify(row.state)}`);
  }
}

function toResponse(text: string | null): StoredResponse {
  let response: unknown;
  try {
    response = JSON.parse(text ?? '');
  } catch {
    throw corruptRecord('the stored response is not JSON');
  }
  const status = (response as { status?: unknown } | null)?.status;
  if (typeof status !== 'number' || !Number.isInteger(status)) throw corruptRecord('the stored response has no status');
  return response as StoredResponse;
}
