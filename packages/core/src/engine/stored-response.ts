import { OncelyError } from '../errors.js';
import { hasControlCharacter } from '../scope.js';
import { attachJson, isTextOnly, jsonTextOf } from '../memory/stored-json.js';
import type { IdempotencyStore, StoredResponse } from '../store.js';
import type { EngineParts } from './engine-events.js';
import type { PreparedRequest } from './prepared-request.js';
import type { IdempotentResponse } from './types.js';

const encoder = new TextEncoder();
/** Any UTF-16 unit outside ASCII. */
const NON_ASCII = /[\u0080-\uffff]/;

/** UTF-8 size of `text`. For ASCII, the usual JSON body, that is its length: no need to encode a copy. */
function utf8Length(text: string): number {
  return NON_ASCII.test(text) ? encoder.encode(text).length : text.length;
}

/** Refuses a handler's response that could not be stored or replayed as given: misuse at run time, `invalid_state`. */
export function checkResponse(response: IdempotentResponse): void {
  if (!response || !Number.isInteger(response.status) || response.status < 100 || response.status > 599) {
    throw new OncelyError('invalid_state', 'oncely: the handler must return { status: 100..599, headers?, body? }');
  }
  // A NUL or a lone surrogate would fail (PostgreSQL text) or be altered (UTF-8) by some store after the effect ran.
  const { resourceId } = response;
  if (resourceId !== undefined && (typeof resourceId !== 'string' || hasControlCharacter(resourceId))) {
    throw new OncelyError(
      'invalid_state',
      'oncely: the handler returned a resourceId that is not a string without control characters or lone surrogates',
    );
  }
}

/** Shapes a response for storage, applying the size limit. */
export function toStored(engine: EngineParts<IdempotencyStore>, prepared: PreparedRequest, response: IdempotentResponse): StoredResponse {
  let json: string | undefined;
  try {
    json = response.body === undefined ? undefined : (jsonTextOf(response.body) ?? JSON.stringify(response.body));
  } catch {
    json = undefined;
  }
  const serializable = response.body === undefined || json !== undefined;
  const bytes = json === undefined ? 0 : utf8Length(json);
  const stored = stripBody(response);
  if (serializable && bytes <= prepared.limitBytes) {
    if (json === undefined) return stored;
    if (isTextOnly(engine.store)) {
      // A text-only store keeps only this text, which is already the snapshot: no copy to parse back.
      attachJson(stored, json);
      stored.body = response.body;
      return stored;
    }
    // Parsed back from the JSON: the stored copy is a snapshot, with what JSON keeps and nothing else.
    stored.body = JSON.parse(json);
    return stored;
  }
  const strategy = engine.oversize === 'reference' && response.resourceId !== undefined ? 'reference' : 'omit';
  engine.report(prepared, { type: 'response_not_stored', bytes, limitBytes: prepared.limitBytes, strategy });
  stored.bodyOmitted = true;
  return stored;
}

/** Status, headers and resourceId of a response, in a new object the caller may add to. */
function stripBody(response: IdempotentResponse): { -readonly [K in keyof StoredResponse]: StoredResponse[K] } {
  const stored: { -readonly [K in keyof StoredResponse]: StoredResponse[K] } = { status: response.status };
  if (response.headers) stored.headers = { ...response.headers };
  if (response.resourceId !== undefined) stored.resourceId = response.resourceId;
  return stored;
}

/** A stored response as the caller gets it back, without the storage-only flag. */
export function replayResponse(stored: StoredResponse | undefined): IdempotentResponse {
  if (!stored) return { status: 200 };
  const { bodyOmitted: _omitted, ...response } = stored;
  return response;
}
