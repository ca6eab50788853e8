import { OncelyError } from '../errors.js';
import { canonicalize } from '../fingerprint/canonicalize.js';
import { integerOption, numberOption } from '../options/option-checks.js';
import { assertValidKey, hasControlCharacter } from '../scope.js';
import type { BeginOptions, JournalOutcome, JsonValue, ListUnresolvedOptions, PurgeSettledOptions } from './journal.js';

/** Longest operation id accepted, in UTF-16 code units. */
export const MAX_OPERATION_ID_LENGTH = 255;

/**
 * Checks an operation id (1–255 characters, no control characters or lone surrogates) before any
 * storage is touched. Throws `OncelyError('invalid_operation_id')`. For journal implementers.
 */
export function assertValidOperationId(operationId: unknown): asserts operationId is string {
  if (
    typeof operationId !== 'string' ||
    operationId.length === 0 ||
    operationId.length > MAX_OPERATION_ID_LENGTH ||
    hasControlCharacter(operationId)
  ) {
    throw new OncelyError(
      'invalid_operation_id',
      `oncely: operationId must be 1-${MAX_OPERATION_ID_LENGTH} characters with no control characters or lone surrogates`,
    );
  }
}

/** A fresh idempotency key: a random UUID from Web Crypto (Node, Bun, Deno, browsers). */
export function newOperationKey(): string {
  return globalThis.crypto.randomUUID();
}

/** The error every journal throws for an id that was never begun (or was purged). */
export function operationNotBegun(adapter: string, operationId: string): OncelyError {
  return new OncelyError(
    'operation_not_begun',
    `oncely/${adapter}: operation "${operationId.slice(0, 64)}" was never begun (call begin first)`,
  );
}

/** Validates `begin` arguments and draws the key a first `begin` would store. For journal implementers. */
export function resolveBegin(
  operationId: string,
  options: BeginOptions = {},
): { readonly key: string; readonly requestJson: string | undefined } {
  assertValidOperationId(operationId);
  const key = options.key ?? newOperationKey();
  assertValidKey(key);
  return { key, requestJson: toJsonText(options.request) };
}

/** Validates a definitive outcome and serializes its data. For journal implementers. */
export function resolveOutcome(outcome: JournalOutcome): {
  readonly state: 'succeeded' | 'failed';
  readonly dataJson: string | undefined;
} {
  if (outcome?.state === 'succeeded') return { state: 'succeeded', dataJson: toJsonText(outcome.value) };
  if (outcome?.state === 'failed') return { state: 'failed', dataJson: toJsonText(outcome.error) };
  throw new OncelyError('invalid_option', "oncely: an outcome's state must be 'succeeded' or 'failed'");
}

/** Validates `listUnresolved` options and applies the default limit (100). */
export function resolveListUnresolved(options: ListUnresolvedOptions): { staleAfterMs: number; limit: number } {
  return {
    staleAfterMs: numberOption('oncely: staleAfterMs', options?.staleAfterMs),
    limit: integerOption('oncely: limit', options?.limit ?? 100),
  };
}

/** Validates `purgeSettled` options and applies the default limit (1 000). */
export function resolvePurgeSettled(options: PurgeSettledOptions): { olderThanMs: number; limit: number } {
  return {
    olderThanMs: numberOption('oncely: olderThanMs', options?.olderThanMs),
    limit: integerOption('oncely: limit', options?.limit ?? 1_000),
  };
}

/** JSON text of a value, or undefined for "no value"; non-JSON values throw instead of being dropped. */
function toJsonText(value: JsonValue | undefined): string | undefined {
  if (value === undefined) return undefined;
  canonicalize(value);
  return JSON.stringify(value);
}
