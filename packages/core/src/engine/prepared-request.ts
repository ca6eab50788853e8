import { fingerprintNow } from '../fingerprint/fingerprint.js';
import { hashesSynchronously, keyHashNow } from '../fingerprint/sha256.js';
import { integerOption } from '../options/option-checks.js';
import { type Scope, toScope } from '../scope.js';
import type { ClaimInput, IdempotencyStore } from '../store.js';
import type { EngineOptions } from './engine-options.js';
import type { IdempotencyRequest } from './types.js';

/** A validated request with its fingerprint, ready for the store. */
export interface PreparedRequest {
  readonly scope: Scope;
  readonly claim: ClaimInput;
  readonly limitBytes: number;
  /** Set once computed: at preparation where hashing is asynchronous, else on first read ({@link keyHashOf}). */
  keyHash?: string;
}

/** The short key hash that events and handlers carry; where hashing is synchronous, computed on first read. */
export const keyHashOf = (prepared: PreparedRequest): string => (prepared.keyHash ??= keyHashNow(prepared.scope.key) as string);

/**
 * Lease tokens: a UUID drawn at the engine's first claim, then a counter. Each claim still gets a
 * token no other claim has (the counter never repeats within an engine, the UUID across engines) at
 * a fraction of a fresh UUID's cost, which every request pays. A token proves ownership to the store:
 * it must be unique, not secret.
 */
export function leaseTokens(): () => string {
  let prefix: string | undefined;
  let count = 0;
  return () => {
    prefix ??= `${globalThis.crypto.randomUUID()}.`;
    return prefix + (count++).toString(36);
  };
}

/** What prepares a request for one engine: validation and fingerprint, before any store call. */
export type PrepareRequest = (request: IdempotencyRequest) => PreparedRequest | Promise<PreparedRequest>;

/**
 * The engine's request preparation: a bad key, scope, payload or size limit throws a coded
 * `OncelyError` and touches nothing. Synchronous on Node, where digests are plain strings.
 */
export function requestPreparer(options: EngineOptions<IdempotencyStore>): PrepareRequest {
  const { leaseMs, retentionMs, maxStoredBytes } = options;
  const nextToken = leaseTokens();
  return (request) => {
    const scope = toScope(request);
    const asked = request.maxStoredBytes;
    const limitBytes = asked == null ? maxStoredBytes : integerOption('oncely: maxStoredBytes', asked, 0);
    const print = fingerprintNow(scope.operation, request.request, request.fingerprint ?? options.fingerprint);
    const build = (fingerprint: string, keyHash?: string): PreparedRequest => ({
      scope,
      claim: { scope, fingerprint, token: nextToken(), leaseMs, retentionMs },
      limitBytes,
      keyHash,
    });
    if (typeof print === 'string' && hashesSynchronously) return build(print);
    return Promise.all([print, keyHashNow(scope.key)]).then((digests) => build(...digests));
  };
}
