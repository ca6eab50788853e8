import { isOncelyError } from '../errors.js';
import { parseRetryAfter } from './retry-after.js';

/** What one attempt produced: a returned value or a thrown error. */
export type AttemptResult<T> =
  | { readonly kind: 'returned'; readonly value: T }
  | { readonly kind: 'threw'; readonly error: unknown };

/**
 * Whether a failed attempt may have changed anything. `not_applied`: the server refused before
 * acting (429, 425, 408, connection refused). `maybe_applied`: the request may have run (timeouts,
 * resets, 502/503/504, 409 in progress); running out of time after one of these is `unknown`.
 */
export type AttemptEffect = 'not_applied' | 'maybe_applied';

/** Why an attempt is worth repeating; custom classifiers may add their own reasons. */
export type RetryReason =
  | 'timeout'
  | 'connection_reset'
  | 'connection_refused'
  | 'request_timeout'
  | 'in_progress'
  | 'too_early'
  | 'throttled'
  | 'bad_gateway'
  | 'unavailable'
  | 'gateway_timeout'
  | (string & {});

/**
 * The classifier's verdict. A `failure` is definitive; its `blame` tells a circuit breaker whether
 * the dependency is unhealthy (`dependency`: 500, unknown errors) or the request was wrong (`request`: 4xx).
 */
export type Classification =
  | { readonly verdict: 'success' }
  | { readonly verdict: 'failure'; readonly blame: 'request' | 'dependency' }
  | {
      readonly verdict: 'retry';
      readonly reason: RetryReason;
      readonly effect: AttemptEffect;
      /** The server's `Retry-After`, in ms from now: the next attempt waits at least this long. */
      readonly retryAfterMs?: number;
    };

/** Decides what an attempt's result means; `now` is the policy clock's time, for `Retry-After` dates. */
export type Classifier<T = unknown> = (result: AttemptResult<T>, context: { readonly now: number }) => Classification;

const SUCCESS: Classification = { verdict: 'success' };
const RETRYABLE_STATUS: ReadonlyMap<number, { reason: RetryReason; effect: AttemptEffect }> = new Map([
  [408, { reason: 'request_timeout', effect: 'not_applied' }],
  // With an Idempotency-Key, 409 means another attempt holds the key: the effect is under way.
  [409, { reason: 'in_progress', effect: 'maybe_applied' }],
  [425, { reason: 'too_early', effect: 'not_applied' }],
  [429, { reason: 'throttled', effect: 'not_applied' }],
  [502, { reason: 'bad_gateway', effect: 'maybe_applied' }],
  // Proxies answer 503 when the upstream resets mid-request, so it may have run.
  [503, { reason: 'unavailable', effect: 'maybe_applied' }],
  [504, { reason: 'gateway_timeout', effect: 'maybe_applied' }],
]);

/**
 * Classifies an HTTP status: 1xx–3xx succeed; 408, 409 (in progress), 425, 429, 502, 503, 504 are
 * retried (honouring `Retry-After`); every other 4xx (validation, auth, 404, 422) fails for the
 * request; other 5xx fail for the dependency, since a 500 is not known to be transient.
 */
export function classifyStatus(status: number, retryAfter: string | null | undefined, now: number): Classification {
  if (status < 400) return SUCCESS;
  const retryable = RETRYABLE_STATUS.get(status);
  if (retryable) {
    const retryAfterMs = parseRetryAfter(retryAfter, now);
    return retryAfterMs === undefined ? { verdict: 'retry', ...retryable } : { verdict: 'retry', ...retryable, retryAfterMs };
  }
  return { verdict: 'failure', blame: status < 500 ? 'request' : 'dependency' };
}

/** Socket errors after the request may have been sent. */
const RESET_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ERR_STREAM_PREMATURE_CLOSE',
]);
/** Timeouts after the request may have been sent. */
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** Failures before any byte reached the server. */
const REFUSED_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Error codes along the `cause` chain (fetch wraps the socket error in a TypeError). */
function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

/** A status carried by an HTTP client's error (`status`, `statusCode` or `response.status`). */
function statusOf(error: object): { status: number; retryAfter: string | null | undefined } | undefined {
  const carrier = error as { status?: unknown; statusCode?: unknown; response?: { status?: unknown; headers?: unknown } };
  const status = [carrier.status, carrier.statusCode, carrier.response?.status].find(
    (value): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599,
  );
  if (status === undefined) return undefined;
  return { status, retryAfter: headerOf(carrier.response?.headers ?? (error as { headers?: unknown }).headers, 'retry-after') };
}

/** Reads a header from a Fetch `Headers` or a plain Node-style object. */
function headerOf(headers: unknown, name: string): string | null | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const get = (headers as { get?: unknown }).get;
  if (typeof get === 'function') return get.call(headers, name) as string | null;
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Classifies a thrown error: oncely's attempt timeout, `TimeoutError`s and socket timeouts/resets are
 * retried as maybe applied; refused connections and DNS failures as not applied; errors carrying an
 * HTTP status go through {@link classifyStatus}. Anything else is a definitive failure: retrying an
 * error nobody recognised is a guess, and guesses are how payments run twice.
 */
export function classifyError(error: unknown, now: number): Classification {
  if (isOncelyError(error, 'attempt_timeout')) return { verdict: 'retry', reason: 'timeout', effect: 'maybe_applied' };
  if (typeof error !== 'object' || error === null) return { verdict: 'failure', blame: 'dependency' };
  if ((error as { name?: unknown }).name === 'TimeoutError') return { verdict: 'retry', reason: 'timeout', effect: 'maybe_applied' };
  const codes = codesOf(error);
  if (codes.some((code) => REFUSED_CODES.has(code))) return { verdict: 'retry', reason: 'connection_refused', effect: 'not_applied' };
  if (codes.some((code) => TIMEOUT_CODES.has(code))) return { verdict: 'retry', reason: 'timeout', effect: 'maybe_applied' };
  if (codes.some((code) => RESET_CODES.has(code))) return { verdict: 'retry', reason: 'connection_reset', effect: 'maybe_applied' };
  const carried = statusOf(error);
  if (carried) return classifyStatus(carried.status, carried.retryAfter, now);
  return { verdict: 'failure', blame: 'dependency' };
}

/** True for a Fetch `Response` or anything shaped like one (status and `headers.get`). */
function isResponseLike(value: unknown): value is { status: number; headers: { get(name: string): string | null } } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { status?: unknown }).status === 'number' &&
    typeof (value as { headers?: { get?: unknown } }).headers?.get === 'function'
  );
}

/**
 * The default classifier: a returned `Response` is classified by status (with `Retry-After`), any
 * other returned value succeeds, and thrown errors go through {@link classifyError}.
 */
export const defaultClassify: Classifier = (result, { now }) => {
  if (result.kind === 'threw') return classifyError(result.error, now);
  if (isResponseLike(result.value)) return classifyStatus(result.value.status, result.value.headers.get('retry-after'), now);
  return SUCCESS;
};
