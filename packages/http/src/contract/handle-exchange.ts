import {
  type IdempotencyRequest,
  type IdempotentResponse,
  isOncelyError,
  isStorageError,
  OncelyError,
  type RunResult,
} from '@oncely/core';
import type { CapturedResponse } from './captured-response.js';
import type { HttpReply } from './http-reply.js';
import { parseIdempotencyKey } from './idempotency-key-header.js';
import type { ContractConfig, IdempotencyContext, ValidationResult } from './options.js';
import { problemReply } from './problem.js';
import { replayReply, toIdempotentResponse } from './replay.js';
import { parsedBodyFingerprint, requestFingerprint } from './request-fingerprint.js';

/** A request body as the binding read it: parsed (object, string, bytes, undefined) or unreadable. */
export type ParsedBody = { readonly kind: 'parsed'; readonly value: unknown } | { readonly kind: 'malformed'; readonly detail: string };

/** One request as a binding hands it to the contract. */
export interface IncomingExchange<Req> {
  /** The framework's request, passed to `scope`, `operation` and `validate`. */
  readonly request: Req;
  readonly method: string;
  /** Path and query as the client sent them. */
  readonly url: string;
  /** The raw `Idempotency-Key` field value(s). */
  readonly idempotencyKey: string | readonly string[] | undefined;
  /** Reads the body; called once, after the key has been checked. */
  readonly body: () => Promise<ParsedBody>;
  /** Aborts when the client goes away. */
  readonly signal?: AbortSignal;
}

/**
 * What the binding does next: run the handler untouched (`unkeyed`), send the handler's own response
 * (`original`), or send a reply the contract built (a problem or a replay).
 */
export type ExchangeOutcome =
  | { readonly kind: 'unkeyed' }
  | { readonly kind: 'original' }
  | { readonly kind: 'reply'; readonly reply: HttpReply };

/** Runs the handler and captures its response; called at most once, only after a successful claim. */
export type Execute = (context: Exclude<IdempotencyContext, { kind: 'unkeyed' }>) => Promise<CapturedResponse>;

/** Thrown inside the engine's handler so the claim is released when the response turns out to stream. */
class StreamingRefused extends Error {}

const reply = (value: HttpReply): ExchangeOutcome => ({ kind: 'reply', reply: value });

/**
 * The HTTP contract, once for every binding: key, body, validation, scope, fingerprint, claim through
 * the engine, then replay, conflict or the handler's response; every refusal is problem+json.
 */
export async function handleExchange<Req>(
  config: ContractConfig<Req>,
  exchange: IncomingExchange<Req>,
  execute: Execute,
): Promise<ExchangeOutcome> {
  const { profile } = config;
  const key = parseIdempotencyKey(exchange.idempotencyKey);
  if (key.kind === 'invalid') return reply(problemReply('invalid-idempotency-key', profile, key.detail));
  if (key.kind === 'absent' && config.required(exchange.method)) {
    return reply(
      problemReply(
        'missing-idempotency-key',
        profile,
        `${exchange.method.toUpperCase()} on this resource requires an Idempotency-Key header (a unique value such as a UUID, reused on every retry).`,
      ),
    );
  }
  const body = await exchange.body();
  if (body.kind === 'malformed') return reply(problemReply('invalid-request-body', profile, body.detail));
  const validation = await config.validate?.(exchange.request, body.value);
  if (validation?.kind === 'invalid') return reply(validationProblem(config, validation));
  if (key.kind === 'absent') return { kind: 'unkeyed' };

  const caller = await config.scope(exchange.request);
  const fingerprint = requestFingerprint(exchange.method, exchange.url, await parsedBodyFingerprint(body.value), config);
  const request: IdempotencyRequest = {
    tenant: caller.tenant,
    principal: caller.principal,
    operation: config.operation(exchange.request),
    key: key.key,
    request: fingerprint.request,
    fingerprint: fingerprint.options,
    signal: exchange.signal,
    ...(config.maxStoredBodyBytes === undefined ? {} : { maxStoredBytes: config.maxStoredBodyBytes }),
  };
  let captured: CapturedResponse | undefined;
  const run = async (context: Parameters<Execute>[0]): Promise<IdempotentResponse> => {
    captured = await execute(context);
    if (captured.kind === 'streaming') throw new StreamingRefused();
    return toIdempotentResponse(config, captured);
  };
  let result: RunResult;
  try {
    result =
      config.mode === 'transaction'
        ? await config.engine.runInTransaction(request, (context) => run({ kind: 'transaction', ...context }))
        : await config.engine.run(request, (context) => run({ kind: 'lease', ...context }));
  } catch (error) {
    return failure(config, error, captured);
  }
  switch (result.kind) {
    case 'executed':
      return { kind: 'original' };
    case 'replayed':
      return reply(replayReply(config, result.response));
    case 'in_progress':
      return reply(
        problemReply(
          'request-in-progress',
          profile,
          'A request with this Idempotency-Key is still being processed. Retry later with the same key to get its result.',
          { headers: { 'retry-after': String(Math.max(1, Math.ceil(result.retryAfterMs / 1000))) } },
        ),
      );
    case 'mismatch':
      return reply(
        problemReply(
          'idempotency-key-reused',
          profile,
          'This Idempotency-Key was first used with a different request. Use a new key for a new request.',
        ),
      );
  }
}

function validationProblem<Req>(config: ContractConfig<Req>, validation: Extract<ValidationResult, { kind: 'invalid' }>) {
  const status = validation.status ?? 400;
  if (!Number.isInteger(status) || status < 400 || status > 499) {
    throw new OncelyError('invalid_state', `oncely/http: validate must answer a 4xx status, got ${status}`);
  }
  return problemReply('invalid-request', config.profile, validation.detail, {
    status,
    members: validation.errors === undefined ? {} : { errors: validation.errors },
  });
}

/** Maps what the engine threw to an outcome, or rethrows what is not the contract's to answer. */
function failure<Req>(config: ContractConfig<Req>, error: unknown, captured: CapturedResponse | undefined): ExchangeOutcome {
  const { profile } = config;
  if (error instanceof StreamingRefused) {
    return reply(
      problemReply(
        'streaming-response-refused',
        profile,
        'The handler answered with a stream (text/event-stream), which cannot be stored or replayed; its claim was released. Serve streams from routes without idempotency.',
      ),
    );
  }
  if (isOncelyError(error, 'invalid_request_payload')) {
    return reply(problemReply('invalid-request-body', profile, error.message));
  }
  // Lease mode after the handler ran: the effect happened, so its true response beats a 503 that invites a second run.
  const ran = captured?.kind === 'complete' && config.mode === 'lease';
  if (ran && (isStorageError(error) || isOncelyError(error, 'lease_lost'))) return { kind: 'original' };
  if (isStorageError(error)) {
    return reply(
      problemReply(
        'storage-unavailable',
        profile,
        'The idempotency store could not be reached, so the request was not executed. Retry with the same key.',
        { headers: { 'retry-after': '1' } },
      ),
    );
  }
  throw error;
}
