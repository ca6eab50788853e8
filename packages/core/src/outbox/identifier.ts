import { OncelyError, type OncelyErrorCode } from '../errors.js';
import { hasControlCharacter } from '../scope.js';

/** Longest event id, aggregate type or id, event type or consumer name accepted. */
export const MAX_IDENTIFIER_LENGTH = 255;

/**
 * Checks a name used as identity (event id, aggregate, event type, consumer): 1–255 characters, no
 * control characters or lone surrogates, since these end up in unique keys, stream fields and logs.
 */
export function assertIdentifier(code: OncelyErrorCode, field: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new OncelyError(code, `oncely: ${field} must be a non-empty string`);
  }
  if (value.length > MAX_IDENTIFIER_LENGTH || hasControlCharacter(value)) {
    throw new OncelyError(
      code,
      `oncely: ${field} must be at most ${MAX_IDENTIFIER_LENGTH} characters with no control characters or lone surrogates`,
    );
  }
}
