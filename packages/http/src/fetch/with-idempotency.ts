import type { IdempotencyStore, TransactionOf } from '@oncely/core';
import { handleExchange } from '../contract/handle-exchange.js';
import { IDEMPOTENCY_KEY_HEADER } from '../contract/idempotency-key-header.js';
import { type IdempotencyContext, type IdempotencyHttpOptions, resolveOptions } from '../contract/options.js';
import { captureFetchResponse, type FetchCapture } from './capture-response.js';
import { readFetchBody } from './read-body.js';
import { toResponse } from './to-response.js';

/**
 * A fetch-standard handler behind {@link withIdempotency}; `context` carries the claim (and `tx`).
 * Whatever the platform passes after the request (Next.js's `{ params }`) follows the context.
 */
export type IdempotentFetchHandler<Tx = unknown, R extends Request = Request, Extra extends unknown[] = []> = (
  request: R,
  context: IdempotencyContext<Tx>,
  ...extra: Extra
) => Response | Promise<Response>;

/** Options of {@link withIdempotency}: `scope`, `operation` and `validate` receive the request (a `NextRequest` in Next.js). */
export type WithIdempotencyOptions<S extends IdempotencyStore = IdempotencyStore, R extends Request = Request> = IdempotencyHttpOptions<R, S>;

/**
 * Wraps a fetch-standard handler `(Request) => Promise<Response>` (Next.js route handlers, Bun,
 * Deno, Cloudflare Workers, Node with a fetch adapter) in the Idempotency-Key contract: the first
 * request with a key runs the handler once and stores its response; retries replay it with
 * `Idempotent-Replayed: true`. The handler gets the very request object it was called with (a
 * `NextRequest` stays one; its body is read once and handed back, see `bufferBody`) and any further
 * arguments after the context. Without `validate`, its first `json()` returns the value the contract parsed.
 *
 * ```ts
 * export const POST = withIdempotency(createPayment, {
 *   engine, operation: 'payments.create.v1', scope: (request) => authenticate(request),
 * });
 * ```
 */
export function withIdempotency<S extends IdempotencyStore, R extends Request = Request, Extra extends unknown[] = []>(
  handler: IdempotentFetchHandler<TransactionOf<S>, R, Extra>,
  options: WithIdempotencyOptions<S, R>,
): (request: R, ...extra: Extra) => Promise<Response> {
  const config = resolveOptions(options);
  // The parsed body goes on to the handler's json() only when no `validate` may have kept it.
  const handOver = config.validate === undefined;
  return async (request, ...extra) => {
    let capture: FetchCapture | undefined;
    const outcome = await handleExchange(
      config,
      {
        request,
        method: request.method,
        url: pathAndQuery(request.url),
        idempotencyKey: request.headers.get(IDEMPOTENCY_KEY_HEADER) ?? undefined,
        body: () => readFetchBody(request, handOver),
        cancellation: request,
      },
      async (context) => {
        capture = await captureFetchResponse(await handler(request, context as IdempotencyContext<TransactionOf<S>>, ...extra));
        return capture.captured;
      },
    );
    switch (outcome.kind) {
      case 'unkeyed':
        return handler(request, { kind: 'unkeyed' }, ...extra);
      case 'original':
        return capture!.original(outcome.headers);
      case 'reply':
        return toResponse(outcome.reply);
    }
  };
}

/**
 * Path and query of a request's URL. `Request.url` is already serialized by the URL parser (nothing
 * left to normalize), so they run from the first slash after the host to a fragment, if any.
 */
export function pathAndQuery(url: string): string {
  const slash = url.indexOf('/', url.indexOf('//') + 2);
  if (slash < 0) return '/';
  const hash = url.indexOf('#', slash);
  return hash < 0 ? url.slice(slash) : url.slice(slash, hash);
}
