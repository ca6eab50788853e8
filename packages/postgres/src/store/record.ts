import type { IdempotencyRecord, Scope, StoredResponse } from '@oncely/core';
import type { ClaimResult } from '@oncely/core/adapter';

/** A record row as the store's statements select it. */
export interface RecordRow {
  readonly fingerprint: string;
  readonly state: IdempotencyRecord['state'];
  readonly fence: number;
  readonly response_status: number | null;
  readonly response_headers: string | null;
  readonly response_body: string | null;
  readonly body_omitted: boolean;
  readonly resource_id: string | null;
  readonly lease_remaining_ms: number | null;
  readonly created_ms: number;
  readonly expires_ms: number;
}

/** What the claim statement returns: a record row and what became of the claim. */
export type ClaimRow = RecordRow & { readonly outcome: 'claimed' | 'existing' | null };

/** Every statement names the record by its scope in the same four parameters ($1-$4). */
export const scopeParams = (scope: Scope) => [scope.tenant, scope.principal, scope.operation, scope.key];

/** What a claim row answers; undefined when a concurrent commit landed between snapshot and write (run the claim again). */
export function claimAnswer(scope: Scope, row: ClaimRow | undefined): ClaimResult | undefined {
  if (row?.outcome === 'claimed') return { kind: 'claimed', fence: row.fence, takeover: row.fence > 1 };
  if (row?.outcome === 'existing') return { kind: 'existing', record: toRecord(scope, row) };
  return undefined;
}

function toResponse(row: RecordRow): StoredResponse {
  const response: { -readonly [K in keyof StoredResponse]: StoredResponse[K] } = { status: row.response_status ?? 0 };
  if (row.response_headers !== null) response.headers = JSON.parse(row.response_headers);
  if (row.response_body !== null) response.body = JSON.parse(row.response_body);
  if (row.resource_id !== null) response.resourceId = row.resource_id;
  if (row.body_omitted) response.bodyOmitted = true;
  return response;
}

/** Maps a row to the record the core contract describes. */
export function toRecord(scope: Scope, row: RecordRow): IdempotencyRecord {
  const base = {
    scope: { ...scope },
    fingerprint: row.fingerprint,
    state: row.state,
    fence: row.fence,
    createdAt: new Date(row.created_ms),
    expiresAt: new Date(row.expires_ms),
  };
  return row.state === 'in_progress'
    ? { ...base, leaseRemainingMs: Math.max(0, row.lease_remaining_ms ?? 0) }
    : { ...base, response: toResponse(row) };
}

/** The parameters `complete` and `save` bind for a response ($7-$11). */
export function responseParams(response: StoredResponse): unknown[] {
  return [
    response.status,
    response.headers === undefined ? null : JSON.stringify(response.headers),
    response.body === undefined ? null : (JSON.stringify(response.body) ?? null),
    response.bodyOmitted === true,
    response.resourceId ?? null,
  ];
}
