import {
  type FingerprintOptions,
  type IdempotencyRequest,
  type IdempotentResponse,
  isOncelyError,
  isStorageError,
  OncelyError,
  type RunResult,
} from '@oncely/core';
import type { CapturedResponse } from './captured-response.js';
import type { HttpReply } from './http-reply.js';
import { IDEMPOTENCY_KEY_HEADER, type ParsedKey, parseIdempotencyKey } from './idempotency-key-header.js';
import type { ContractConfig, IdempotencyContext, ValidationResult } from './options.js';
import type { ParsedBody } from './parsed-body.js';
import { problemReply } from './problem.js';
import { replayReply, toIdempotentResponse } from './replay.js';
import { fingerprintedRequest, parsedBodyFingerprint } from './request-fingerprint.js';

export type { ParsedBody } from './parsed-body.js';

/** One request as a binding hands it to the contract. */
export interface IncomingExchange<Req> {
  /** The framework's request, passed to `scope`, `operation` and `validate`. */
  readonly request: Req;
  readonly method: string;
  /** Path and query as the client sent them. */
  readonly url: string;
  /** The raw `Idempotency-Key` field value(s). */
  readonly idempotencyKey: string | readonly string[] | undefined;
  /** Reads the body; called once, after the key has been checked. A body already parsed comes back as it is, without a promise. */
  readonly body: () => ParsedBody | Promise<ParsedBody>;
  /** Where the signal that aborts when the client goes away is read, only if the handler asks for it. */
  readonly cancellation?: { readonly signal?: AbortSignal | undefined };
}

/** The engine's request for one exchange; its `signal` is read from the exchange only when the engine needs it. */
class ExchangeRequest implements IdempotencyRequest {
  readonly #cancellation: IncomingExchange<unknown>['cancellation'];
  readonly maxStoredBytes?: number;

  constructor(
    readonly tenant: string,
    readonly principal: string | undefined,
    readonly operation: string,
    readonly key: string,
    readonly request: unknown,
    readonly fingerprint: FingerprintOptions,
    cancellation: IncomingExchange<unknown>['cancellation'],
    maxStoredBytes: number | undefined,
  ) {
    this.#cancellation = cancellation;
    if (maxStoredBytes !== undefined) this.maxStoredBytes = maxStoredBytes;
  }

  get signal(): AbortSignal | undefined {
    return this.#cancellation?.signal;
  }
}

/**
 * What the binding does next: run the handler untouched (`unkeyed`), send the handler's own response
 * (`original`), or send a reply the contract built (a problem or a replay).
 */
export type ExchangeOutcome =
  | { readonly kind: 'unkeyed' }
  | { readonly kind: 'original'; readonly headers: Readonly<Record<string, string>> }
  | { readonly kind: 'reply'; readonly reply: HttpReply };

const ORIGINAL: ExchangeOutcome = { kind: 'original', headers: {} };

/** Runs the handler and captures its response; called at most once, only after a successful claim. */
export type Execute = (context: Exclude<IdempotencyContext, { kind: 'unkeyed' }>) => Promise<CapturedResponse>;

/** Thrown inside the engine's handler so the claim is released when the response turns out to stream. */
class StreamingRefused extends Error {}

const reply = (value: HttpReply): ExchangeOutcome => ({ kind: 'reply', reply: value });

/**
 * The engine's context with its mode added in place. A spread would read every getter, and so build
 * the AbortController, lease timer and key hash the engine makes only for handlers that ask.
 */
function withKind<C extends object, K extends 'lease' | 'transaction'>(context: C, kind: K): C & { readonly kind: K } {
  (context as { kind?: K }).kind = kind;
  return context as C & { readonly kind: K };
}

/**
 * The HTTP contract, once for every binding: key, body, validation, scope, fingerprint, claim through
 * the engine, then replay, conflict or the handler's response; every refusal is problem+json. In the
 * `stripe` profile every answer to a well-formed key carries it back in `Idempotency-Key`, as Stripe's
 * API does (stripe-node reads it as `lastResponse.idempotencyKey`).
 */
export function handleExchange<Req>(
  config: ContractConfig<Req>,
  exchange: IncomingExchange<Req>,
  execute: Execute,
): Promise<ExchangeOutcome> {
  // Not an async frame of its own: decide's promise is the answer, unless the key is echoed.
  let key: ParsedKey;
  try {
    key = parseIdempotencyKey(exchange.idempotencyKey);
  } catch (error) {
    return Promise.reject(error);
  }
  const outcome = decide(config, exchange, execute, key);
  if (config.profile !== 'stripe' || key.kind !== 'valid') return outcome;
  const echoed = key.key;
  return outcome.then((value) => echoKey(value, echoed));
}

function echoKey(outcome: ExchangeOutcome, key: string): ExchangeOutcome {
  switch (outcome.kind) {
    case 'unkeyed':
      return outcome;
    case 'original':
      return { kind: 'original', headers: { [IDEMPOTENCY_KEY_HEADER]: key } };
    case 'reply':
      return reply({ ...outcome.reply, headers: { ...outcome.reply.headers, [IDEMPOTENCY_KEY_HEADER]: key } });
  }
}

async function decide<Req>(
  config: ContractConfig<Req>,
  exchange: IncomingExchange<Req>,
  execute: Execute,
  key: ParsedKey,
): Promise<ExchangeOutcome> {
  const { profile } = config;
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
  const read = exchange.body();
  const body = read instanceof Promise ? await read : read;
  if (body.kind === 'malformed') return reply(problemReply('invalid-request-body', profile, body.detail));
  if (body.kind === 'too-large') return reply(problemReply('request-body-too-large', profile, body.detail));
  // Only a keyed request needs a fingerprint: an unkeyed one may carry what no fingerprint stands for.
  if (body.kind === 'unsupported' && key.kind === 'valid') return reply(problemReply('unsupported-request-body', profile, body.detail));
  const validated = config.validate?.(exchange.request, body.value);
  const validation = validated instanceof Promise ? await validated : validated;
  if (validation?.kind === 'invalid') return reply(validationProblem(config, validation));
  if (key.kind === 'absent') return { kind: 'unkeyed' };

  const scoped = config.scope(exchange.request);
  const caller = scoped instanceof Promise ? await scoped : scoped;
  const operation = config.operation(exchange.request);
  const printed = parsedBodyFingerprint(body.value);
  const fingerprinted = fingerprintedRequest(exchange.method, exchange.url, printed instanceof Promise ? await printed : printed);
  const request = new ExchangeRequest(
    caller.tenant,
    caller.principal,
    operation,
    key.key,
    fingerprinted,
    config.fingerprint,
    exchange.cancellation,
    config.maxStoredBodyBytes,
  );
  let captured: CapturedResponse | undefined;
  const run = async (context: Parameters<Execute>[0]): Promise<IdempotentResponse> => {
    const started = performance.now();
    captured = await execute(context);
    config.retryAfter.record(operation, performance.now() - started);
    if (captured.kind === 'streaming') throw new StreamingRefused();
    return toIdempotentResponse(config, captured);
  };
  let result: RunResult;
  try {
    result =
      config.mode === 'transaction'
        ? await config.engine.runInTransaction(request, (context) => run(withKind(context, 'transaction')))
        : await config.engine.run(request, (context) => run(withKind(context, 'lease')));
  } catch (error) {
    return failure(config, error, captured);
  }
  switch (result.kind) {
    case 'executed':
      return ORIGINAL;
    case 'replayed':
      return reply(replayReply(config, result.response));
    case 'in_progress':
      return reply(
        problemReply(
          'request-in-progress',
          profile,
          'A request with this Idempotency-Key is still being processed. Retry later with the same key to get its result.',
          { headers: { 'retry-after': String(config.retryAfter.seconds(operation, result.retryAfterMs)) } },
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
  if (ran && (isStorageError(error) || isOncelyError(error, 'lease_lost'))) return ORIGINAL;
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
