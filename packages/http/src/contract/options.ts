import {
  DEFAULT_MAX_DEPTH,
  type FingerprintOptions,
  type HandlerContext,
  type Idempotency,
  type IdempotencyStore,
  OncelyError,
  type TransactionHandlerContext,
  toScope,
} from '@oncely/core';
import { integerOption, isTransactionalStore } from '@oncely/core/adapter';
import type { ResponseHeaders } from './http-reply.js';
import type { Profile } from './problem.js';
import { RetryAfterEstimate } from './retry-after.js';
import { type BodyFingerprintOptions, bodyFingerprintOptions } from './request-fingerprint.js';
import { DEFAULT_REPLAYED_HEADERS } from './replayed-headers.js';
import type { StoredBody } from './stored-body.js';

/** Who is calling, from the authenticated identity (never from the key). */
export interface CallerScope {
  readonly tenant: string;
  readonly principal?: string;
}

/** The answer of `validate`: `undefined` or `{ kind: 'valid' }` lets the request through. */
export type ValidationResult =
  | { readonly kind: 'valid' }
  | {
      readonly kind: 'invalid';
      /** Human-readable explanation, sent as the problem's `detail`. */
      readonly detail: string;
      /** A 4xx status (default 400). */
      readonly status?: number;
      /** Machine-readable errors, sent as the problem's `errors` member. */
      readonly errors?: readonly unknown[];
    };

/** Execution mode: lease (any store) or one transaction with the business writes (transactional stores). */
export type IdempotencyMode = 'lease' | 'transaction';

/** A handler's response as `resourceId` sees it. */
export interface ResponseSummary {
  readonly status: number;
  readonly headers: ResponseHeaders;
  /** The body as it will be stored; undefined when empty. */
  readonly body: StoredBody | undefined;
}

/**
 * What the handler learns about the idempotency of its request: the claim it holds (lease or
 * transaction, with the open transaction), or `unkeyed` when no key was sent and none is required.
 */
export type IdempotencyContext<Tx = unknown> =
  | ({ readonly kind: 'lease' } & HandlerContext)
  | ({ readonly kind: 'transaction' } & TransactionHandlerContext<Tx>)
  | { readonly kind: 'unkeyed' };

/** Options shared by `withIdempotency`, the Express middleware and the Fastify plugin. */
export interface IdempotencyHttpOptions<Req, S extends IdempotencyStore = IdempotencyStore> extends BodyFingerprintOptions {
  /** The engine from `createIdempotency`. */
  readonly engine: Idempotency<S>;
  /** Stable semantic name with a version (`payments.create.v1`), or a function of the request. */
  readonly operation: string | ((request: Req) => string);
  /** The caller's tenant and principal, from authentication. */
  readonly scope: (request: Req) => CallerScope | Promise<CallerScope>;
  /** `lease` (default) or `transaction` (the store must support transactions). */
  readonly mode?: IdempotencyMode;
  /** Whether a request without a key is refused (default: true for POST and PATCH). */
  readonly required?: boolean;
  /** Error statuses and shapes: `ietf` (default) or `stripe`. */
  readonly profile?: Profile;
  /** Runs before the claim, with the parsed body: an invalid request never starts an operation. */
  readonly validate?: (
    request: Req,
    body: unknown,
  ) => ValidationResult | undefined | Promise<ValidationResult | undefined>;
  /** Largest stored body (UTF-8 bytes of its stored JSON form); a larger one follows the engine's `oversize` strategy. */
  readonly maxStoredBodyBytes?: number;
  /** Response headers stored and replayed (default {@link DEFAULT_REPLAYED_HEADERS}); replaces the list. */
  readonly replayHeaders?: readonly string[];
  /** The id of the created resource, stored for lookups and for the engine's `reference` strategy. */
  readonly resourceId?: (response: ResponseSummary) => string | undefined;
  /** Deepest nesting of arrays and objects in a body (default 512); a deeper body is a 400 problem, never a stack overflow. */
  readonly maxBodyDepth?: number;
}

/** Methods whose requests need a key unless `required` says otherwise. */
const KEY_REQUIRED_BY_DEFAULT = new Set(['POST', 'PATCH']);

/** Options checked once and normalized for the contract. */
export interface ContractConfig<Req> extends BodyFingerprintOptions {
  readonly engine: Idempotency<IdempotencyStore>;
  readonly mode: IdempotencyMode;
  readonly profile: Profile;
  readonly operation: (request: Req) => string;
  readonly scope: (request: Req) => CallerScope | Promise<CallerScope>;
  readonly required: (method: string) => boolean;
  readonly validate: IdempotencyHttpOptions<Req>['validate'];
  readonly maxStoredBodyBytes: number | undefined;
  readonly replayHeaders: ReadonlySet<string>;
  readonly resourceId: IdempotencyHttpOptions<Req>['resourceId'];
  /** Observed durations per operation, for `Retry-After` on a 409. */
  readonly retryAfter: RetryAfterEstimate;
  /** Core's fingerprint options, built once from `select`, `exclude` and `defaults`. */
  readonly fingerprint: FingerprintOptions;
}

/** Checks options when the route is set up, so a misconfiguration fails at startup, not per request. */
export function resolveOptions<Req, S extends IdempotencyStore>(options: IdempotencyHttpOptions<Req, S>): ContractConfig<Req> {
  const { engine, operation, scope, mode = 'lease', profile = 'ietf', maxStoredBodyBytes } = options;
  if (!engine || typeof engine.run !== 'function') {
    throw new OncelyError('invalid_option', 'oncely/http: `engine` must come from createIdempotency');
  }
  if (typeof scope !== 'function') {
    throw new OncelyError('invalid_option', 'oncely/http: `scope(request)` must return the caller tenant and principal');
  }
  if (typeof operation === 'string') toScope({ tenant: 'startup-check', operation, key: 'startup-check' });
  else if (typeof operation !== 'function') {
    throw new OncelyError('invalid_option', 'oncely/http: `operation` must be a name such as "payments.create.v1" or a function');
  }
  if (mode === 'transaction' && !isTransactionalStore(engine.store)) {
    throw new OncelyError(
      'capability_missing',
      `oncely/http: mode "transaction" needs a transactional store; the ${engine.store.name} store is not`,
    );
  }
  if (mode !== 'lease' && mode !== 'transaction') {
    throw new OncelyError('invalid_option', `oncely/http: mode must be "lease" or "transaction", got ${String(mode)}`);
  }
  if (profile !== 'ietf' && profile !== 'stripe') {
    throw new OncelyError('invalid_option', `oncely/http: profile must be "ietf" or "stripe", got ${String(profile)}`);
  }
  if (maxStoredBodyBytes !== undefined) integerOption('oncely/http: maxStoredBodyBytes', maxStoredBodyBytes, 0);
  const { maxBodyDepth = DEFAULT_MAX_DEPTH } = options;
  integerOption('oncely/http: maxBodyDepth', maxBodyDepth);
  return {
    engine: engine as Idempotency<IdempotencyStore>,
    mode,
    profile,
    operation: typeof operation === 'string' ? () => operation : operation,
    scope,
    required:
      options.required === undefined
        ? (method) => KEY_REQUIRED_BY_DEFAULT.has(method.toUpperCase())
        : () => options.required === true,
    validate: options.validate,
    maxStoredBodyBytes,
    replayHeaders: new Set((options.replayHeaders ?? DEFAULT_REPLAYED_HEADERS).map((name) => name.toLowerCase())),
    resourceId: options.resourceId,
    retryAfter: new RetryAfterEstimate(),
    // The body sits one level inside the fingerprinted `{ method, path, query, body }`.
    fingerprint: { ...bodyFingerprintOptions(options), maxDepth: maxBodyDepth + 1 },
    select: options.select,
    exclude: options.exclude,
    defaults: options.defaults,
  };
}
