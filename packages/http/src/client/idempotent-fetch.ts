import { OncelyError, StorageError } from '@oncely/core';
import { integerOption } from '@oncely/core/adapter';
import { describeError, type JsonValue, type OperationJournal, retryOperation } from '@oncely/core/journal';
import { type RetryOutcome, type RetryPolicy, type RetryPolicyOptions, retryPolicy } from '@oncely/core/retry';
import { IDEMPOTENCY_KEY_HEADER } from '../contract/idempotency-key-header.js';
import type { Profile } from '../contract/problem.js';
import { captureBody, fromJournaled, isJournaledResponse, toJournaled } from './journaled-response.js';
import { formatIdempotencyKey } from './key-header.js';
import { withNetworkFailures } from './network-failure.js';

/** Options of {@link idempotentFetch}. */
export interface IdempotentFetchOptions {
  /** Your stable id for this logical operation (`order-42:charge`): the same id resumes it after a restart. */
  readonly operationId: string;
  /** Where the key is generated once and persisted before the first attempt. */
  readonly journal: OperationJournal;
  /** Retry policy (a `retryPolicy()` to share its budget and breaker, or options); default `retryPolicy()`. */
  readonly policy?: RetryPolicy<Response> | RetryPolicyOptions<Response>;
  /** Header form: `ietf` sends a structured-field string (`"…"`, default), `stripe` the bare key. */
  readonly profile?: Profile;
  /** The fetch to call (default `globalThis.fetch`). */
  readonly fetch?: (request: Request) => Promise<Response>;
  /** Largest response body kept in the journal for a later run to return (default 65 536 bytes). */
  readonly maxJournaledBodyBytes?: number;
}

/**
 * `fetch` for an operation that must happen once. The `Idempotency-Key` comes from the journal:
 * generated once, persisted before the first attempt, and sent by every attempt and every process
 * that runs the same `operationId` again, so a server that honours the key applies the effect once.
 * Responses go through the policy's classifier (408/409/425/429/502/503/504 and ambiguous network
 * failures are retried, `Retry-After` honoured within the deadline); a bare `TypeError` from `fetch`,
 * which is how browsers report every network failure, is retried as an attempt that may have applied.
 *
 * Returns `succeeded` with the `Response`, `failed` with the definitive `Response` (or the error),
 * or `unknown` with the key when time ran out after an attempt that may have been applied: keep the
 * operation id and run it again later. An operation the journal already settled is answered from the
 * journal without a request (the response rebuilt from its status, replayable headers and body).
 * Pass the caller's cancellation as `init.signal`: it stops the attempt and the backoff sleep.
 */
export async function idempotentFetch(
  input: string | URL | Request,
  init: RequestInit | undefined,
  options: IdempotentFetchOptions,
): Promise<RetryOutcome<Response>> {
  const { journal, operationId, profile = 'ietf' } = options;
  if (!journal || typeof journal.begin !== 'function') {
    throw new OncelyError('invalid_option', 'oncely/http: idempotentFetch needs a journal (memoryJournal, postgresJournal...)');
  }
  const limit = integerOption('oncely/http: maxJournaledBodyBytes', options.maxJournaledBodyBytes ?? 65_536, 0);
  if (profile !== 'ietf' && profile !== 'stripe') {
    throw new OncelyError('invalid_option', `oncely/http: profile must be "ietf" or "stripe", got ${String(profile)}`);
  }
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const network = withNetworkFailures(retryPolicy<Response>(options.policy ?? {}));
  const { signal: callerSignal, ...rest } = init ?? {};
  const template = new Request(input, rest);
  if (template.headers.has(IDEMPOTENCY_KEY_HEADER)) {
    throw new OncelyError('invalid_option', 'oncely/http: idempotentFetch sets Idempotency-Key from the journal; do not set it yourself');
  }
  // Buffered once, so every attempt sends the same bytes whatever the body was (a stream included).
  const body = template.body === null ? null : new Uint8Array(await template.arrayBuffer());
  const captured = new WeakMap<Response, Uint8Array | undefined>();
  const journaled = (response: unknown) =>
    response instanceof Response && captured.has(response) ? toJournaled(response, captured.get(response)) : describeError(response);
  const url = new URL(template.url);
  const signal = callerSignal ?? (input instanceof Request ? input.signal : undefined);

  return retryOperation<Response>(
    async ({ key, signal }) => {
      const headers = new Headers(template.headers);
      headers.set(IDEMPOTENCY_KEY_HEADER, formatIdempotencyKey(key, profile));
      let response: Response;
      try {
        response = await send(new Request(template, { headers, body, signal }));
      } catch (error) {
        network.mark(error);
        throw error;
      }
      // Kept for the journal; the caller still gets the response unread.
      captured.set(response, await captureBody(response, limit, signal));
      return response;
    },
    network.policy,
    {
      journal,
      operationId,
      // Enough to reconcile by hand; the query string and body may hold secrets and stay out.
      request: { method: template.method, url: `${url.origin}${url.pathname}` },
      encode: (response) => journaled(response),
      encodeError: (error) => journaled(error),
      decode: (stored: JsonValue | undefined) => {
        if (!isJournaledResponse(stored)) {
          // Not what idempotentFetch records: a journal entry it cannot read (fail closed, as for any storage failure).
          throw new StorageError(journal.name, 'journal.get', new Error(`the entry of "${operationId}" holds no response`), 'corrupt_record');
        }
        return fromJournaled(stored);
      },
      // A recorded failure is a response when the server gave one, else the error as described then.
      decodeError: (stored: JsonValue | undefined) => (isJournaledResponse(stored) ? fromJournaled(stored) : stored),
      ...(signal ? { signal } : {}),
    },
  );
}
