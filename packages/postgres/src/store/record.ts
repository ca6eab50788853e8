import type { IdempotencyRecord, Scope, StoredResponse } from '@oncely/core';

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
