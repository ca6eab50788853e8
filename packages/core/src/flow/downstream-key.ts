import { OncelyError } from '../errors.js';
import { sha256HexNow } from '../fingerprint/sha256.js';
import { hasControlCharacter, type Scope } from '../scope.js';

/** Separates this derivation from every other SHA-256 oncely computes (fingerprints, key hashes). */
const DOMAIN = 'oncely.downstream-key.v1';
/** Longest step name: room for a service and an action (`stripe.charge`), never a payload. */
export const MAX_STEP_LENGTH = 128;

/** Checks a step name: 1–128 characters, no control characters or lone surrogates. */
export function assertStepName(step: unknown): asserts step is string {
  if (typeof step !== 'string' || step.length === 0 || step.length > MAX_STEP_LENGTH || hasControlCharacter(step)) {
    throw new OncelyError(
      'invalid_option',
      `oncely: a step name must be 1-${MAX_STEP_LENGTH} characters without control characters, such as "stripe.charge"`,
    );
  }
}

/**
 * The text a downstream key hashes: the domain, then tenant, principal, operation, key and step, each
 * as `<length in UTF-16 units>:<text>`. A length prefix ends every field where its text says, so
 * no two tuples share an encoding (`('a','bc')` and `('ab','c')` differ in their lengths).
 */
export function downstreamKeyInput(scope: Scope, step: string): string {
  let text = DOMAIN;
  for (const field of [scope.tenant, scope.principal, scope.operation, scope.key, step]) text += `|${field.length}:${field}`;
  return text;
}

/**
 * The idempotency key to forward to a downstream system (Stripe's `Idempotency-Key`) for one step of
 * this operation: lowercase hex SHA-256 of {@link downstreamKeyInput}. It depends on the scope, the
 * client's key and the step name only, so every retry, takeover and completer sends the same key; it
 * is distinct for every step, and the client's key cannot be read back from it.
 */
export function downstreamKey(scope: Scope, step: string): Promise<string> {
  assertStepName(step);
  return Promise.resolve(sha256HexNow(downstreamKeyInput(scope, step)));
}
