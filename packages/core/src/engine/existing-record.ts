import type { IdempotencyRecord, IdempotencyStore } from '../store.js';
import type { EngineParts } from './engine-events.js';
import type { PreparedRequest } from './prepared-request.js';
import { replayResponse } from './stored-response.js';
import type { IdempotentResponse, RunResult } from './types.js';

/** What a found record means for this request; synchronous unless a replay must be rebuilt. */
export function answerExisting<B>(
  engine: EngineParts<IdempotencyStore>,
  prepared: PreparedRequest,
  record: IdempotencyRecord,
): RunResult<B> | Promise<RunResult<B>> {
  const { report, rebuild, onEvent } = engine;
  if (record.fingerprint !== prepared.claim.fingerprint) {
    report(prepared, { type: 'mismatch' });
    return { kind: 'mismatch' };
  }
  if (record.state === 'in_progress') {
    const retryAfterMs = Math.max(1, Math.ceil(record.leaseRemainingMs ?? engine.leaseMs));
    report(prepared, { type: 'in_progress', retryAfterMs });
    return { kind: 'in_progress', retryAfterMs };
  }
  if (onEvent) report(prepared, { type: 'replayed', state: record.state });
  const { state } = record;
  const stored = record.response;
  if (stored?.bodyOmitted && stored.resourceId !== undefined && rebuild) {
    return rebuild({ ...stored, resourceId: stored.resourceId }).then((response) => ({
      kind: 'replayed',
      state,
      response: response as IdempotentResponse<B>,
    }));
  }
  return { kind: 'replayed', state, response: replayResponse(stored) as IdempotentResponse<B> };
}
