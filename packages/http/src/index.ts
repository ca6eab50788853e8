export { type IdempotentFetchOptions, idempotentFetch } from './client/idempotent-fetch.js';
export { formatIdempotencyKey } from './client/key-header.js';
export type { HttpReply, ResponseHeaders } from './contract/http-reply.js';
export { IDEMPOTENCY_KEY_HEADER, type ParsedKey, parseIdempotencyKey } from './contract/idempotency-key-header.js';
export { DEFAULT_REPLAYED_HEADERS } from './contract/replayed-headers.js';
export type {
  CallerScope,
  IdempotencyContext,
  IdempotencyHttpOptions,
  IdempotencyMode,
  ResponseSummary,
  ValidationResult,
} from './contract/options.js';
export {
  PROBLEM_CONTENT_TYPE,
  PROBLEM_TYPE_BASE,
  type ProblemCode,
  type ProblemDetails,
  type Profile,
} from './contract/problem.js';
export { REPLAYED_HEADER } from './contract/replay.js';
export type { BodyFingerprintOptions } from './contract/request-fingerprint.js';
export { decodeBody, encodeBody, type StoredBody } from './contract/stored-body.js';
export { idempotencyKeyLookup } from './fetch/key-lookup.js';
export { type IdempotentFetchHandler, type WithIdempotencyOptions, withIdempotency } from './fetch/with-idempotency.js';
export { createKeyLookup, type KeyLookupBody, type KeyLookupOptions, type KeyRecordView } from './lookup/key-lookup.js';
