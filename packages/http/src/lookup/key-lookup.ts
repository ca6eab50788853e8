import { type Idempotency, type IdempotencyRecord, type IdempotencyStore, isStorageError, toScope } from '@oncely/core';
import { type HttpReply, jsonReply } from '../contract/http-reply.js';
import { parseIdempotencyKey } from '../contract/idempotency-key-header.js';
import type { CallerScope } from '../contract/options.js';
import { type Profile, problemReply } from '../contract/problem.js';

/** Options of the lookup endpoint (`GET /idempotency-keys/:key`). */
export interface KeyLookupOptions<Req> {
  readonly engine: Idempotency<IdempotencyStore>;
  /** The caller's tenant and principal, from authentication: the lookup never leaves this scope. */
  readonly scope: (request: Req) => CallerScope | Promise<CallerScope>;
  /** The operations whose records this endpoint reports (a key is scoped per operation). */
  readonly operations: readonly string[];
  /** Error shapes: `ietf` (default) or `stripe`. */
  readonly profile?: Profile;
}

/** One record as the lookup endpoint reports it. */
export interface KeyRecordView {
  readonly operation: string;
  readonly state: IdempotencyRecord['state'];
  readonly createdAt: string;
  readonly expiresAt: string;
  /** In progress: seconds until the current lease lapses. */
  readonly retryAfterSeconds?: number;
  /** Terminal: the stored status and the created resource's id, if one was recorded. */
  readonly response?: { readonly status: number; readonly resourceId?: string };
}

/** The lookup endpoint's 200 body. */
export interface KeyLookupBody {
  readonly key: string;
  readonly records: readonly KeyRecordView[];
}

function view(operation: string, record: IdempotencyRecord): KeyRecordView {
  const base = {
    operation,
    state: record.state,
    createdAt: record.createdAt.toISOString(),
    expiresAt: record.expiresAt.toISOString(),
  };
  if (record.state === 'in_progress') {
    return { ...base, retryAfterSeconds: Math.max(1, Math.ceil((record.leaseRemainingMs ?? 0) / 1000)) };
  }
  const response = record.response;
  if (!response) return base;
  return {
    ...base,
    response: response.resourceId === undefined ? { status: response.status } : { status: response.status, resourceId: response.resourceId },
  };
}

/**
 * The reconciliation lookup, framework-neutral: the state of the caller's own records for `key`
 * (200), 404 when the caller has none (another tenant's record for the same key is never visible),
 * 400 for a malformed key, 503 when the store is down. Bindings wrap it for their framework.
 */
export function createKeyLookup<Req>(options: KeyLookupOptions<Req>): (request: Req, key: string | undefined) => Promise<HttpReply> {
  const { engine, operations, profile = 'ietf' } = options;
  for (const operation of operations) toScope({ tenant: 'startup-check', operation, key: 'startup-check' });
  const headers = { 'cache-control': 'no-store' };
  return async (request, rawKey) => {
    const parsed = parseIdempotencyKey(rawKey ?? '');
    if (parsed.kind !== 'valid') {
      return problemReply('invalid-idempotency-key', profile, parsed.kind === 'invalid' ? parsed.detail : 'The key is missing.');
    }
    const caller = await options.scope(request);
    let found: (readonly [string, IdempotencyRecord | undefined])[];
    try {
      found = await Promise.all(
        operations.map(async (operation) => {
          const record = await engine.get({ tenant: caller.tenant, principal: caller.principal, operation, key: parsed.key });
          return [operation, record] as const;
        }),
      );
    } catch (error) {
      if (!isStorageError(error)) throw error;
      return problemReply('storage-unavailable', profile, 'The idempotency store could not be reached. Retry later.', {
        headers: { 'retry-after': '1' },
      });
    }
    const records = found.flatMap(([operation, record]) => (record ? [view(operation, record)] : []));
    if (records.length === 0) {
      return problemReply('idempotency-key-not-found', profile, 'You have no operation recorded under this Idempotency-Key.', {
        headers,
      });
    }
    const body: KeyLookupBody = { key: parsed.key, records };
    return jsonReply(200, body, headers);
  };
}
