import type { HttpReply } from './http-reply.js';
import { jsonReply } from './http-reply.js';

/** How errors look on the wire: the IETF draft's statuses, or Stripe's (400 for a reused key, `error` object). */
export type Profile = 'ietf' | 'stripe';

/** Every error the HTTP contract answers with; each has a stable `type` URI under {@link PROBLEM_TYPE_BASE}. */
export type ProblemCode =
  | 'missing-idempotency-key'
  | 'invalid-idempotency-key'
  | 'idempotency-key-reused'
  | 'request-in-progress'
  | 'invalid-request'
  | 'invalid-request-body'
  | 'unsupported-request-body'
  | 'request-body-too-large'
  | 'storage-unavailable'
  | 'streaming-response-refused'
  | 'idempotency-key-not-found';

/** Where the `type` URIs of oncely's problems live: `https://oncely.dev/problems/<code>`. */
export const PROBLEM_TYPE_BASE = 'https://oncely.dev/problems/';

/** An RFC 9457 problem details object, with optional extension members. */
export interface ProblemDetails {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly [extension: string]: unknown;
}

/** Stripe's error object, added as an extension member in the `stripe` profile. */
type StripeErrorType = 'idempotency_error' | 'invalid_request_error' | 'api_error';

interface ProblemDefinition {
  readonly title: string;
  readonly status: number;
  readonly stripeStatus: number;
  readonly stripeType: StripeErrorType;
}

const PROBLEMS: Readonly<Record<ProblemCode, ProblemDefinition>> = {
  'missing-idempotency-key': {
    title: 'Idempotency-Key is missing',
    status: 400,
    stripeStatus: 400,
    stripeType: 'invalid_request_error',
  },
  'invalid-idempotency-key': {
    title: 'Idempotency-Key is malformed',
    status: 400,
    stripeStatus: 400,
    stripeType: 'invalid_request_error',
  },
  'idempotency-key-reused': {
    title: 'Idempotency-Key is already used',
    status: 422,
    stripeStatus: 400,
    stripeType: 'idempotency_error',
  },
  'request-in-progress': {
    title: 'A request is outstanding for this Idempotency-Key',
    status: 409,
    stripeStatus: 409,
    stripeType: 'idempotency_error',
  },
  'invalid-request': { title: 'The request is invalid', status: 400, stripeStatus: 400, stripeType: 'invalid_request_error' },
  'invalid-request-body': {
    title: 'The request body cannot be read',
    status: 400,
    stripeStatus: 400,
    stripeType: 'invalid_request_error',
  },
  'unsupported-request-body': {
    title: 'The request body cannot be fingerprinted',
    status: 415,
    stripeStatus: 415,
    stripeType: 'invalid_request_error',
  },
  'request-body-too-large': {
    title: 'The request body is too large',
    status: 413,
    stripeStatus: 413,
    stripeType: 'invalid_request_error',
  },
  'storage-unavailable': {
    title: 'Idempotency storage is unavailable',
    status: 503,
    stripeStatus: 503,
    stripeType: 'api_error',
  },
  'streaming-response-refused': {
    title: 'A streaming response cannot be made idempotent',
    status: 500,
    stripeStatus: 500,
    stripeType: 'api_error',
  },
  'idempotency-key-not-found': {
    title: 'No record for this Idempotency-Key',
    status: 404,
    stripeStatus: 404,
    stripeType: 'invalid_request_error',
  },
};

/** What a caller can add to a problem: a status override (validation), extension members, headers. */
export interface ProblemExtras {
  readonly status?: number;
  readonly members?: Readonly<Record<string, unknown>>;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The `application/problem+json` media type (RFC 9457). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Builds the problem details object for `code` in `profile`. */
export function problemDetails(code: ProblemCode, profile: Profile, detail: string, extras: ProblemExtras = {}): ProblemDetails {
  const definition = PROBLEMS[code];
  const status = extras.status ?? (profile === 'stripe' ? definition.stripeStatus : definition.status);
  const problem: ProblemDetails = {
    ...extras.members,
    type: `${PROBLEM_TYPE_BASE}${code}`,
    title: definition.title,
    status,
    detail,
  };
  // Stripe's clients read `error.type` and `error.message`; RFC 9457 allows the extra member.
  return profile === 'stripe' ? { ...problem, error: { type: definition.stripeType, message: detail } } : problem;
}

/** A complete `application/problem+json` reply. */
export function problemReply(code: ProblemCode, profile: Profile, detail: string, extras: ProblemExtras = {}): HttpReply {
  const problem = problemDetails(code, profile, detail, extras);
  return jsonReply(problem.status, problem, { ...extras.headers, 'content-type': PROBLEM_CONTENT_TYPE });
}
