import { OncelyError, type OncelyErrorCode } from '../errors.js';
import { hasControlCharacter } from '../scope.js';

/** Most headers one event carries. */
export const MAX_EVENT_HEADERS = 32;
/** Longest header value accepted (a `tracestate` is at most 512 characters). */
export const MAX_HEADER_VALUE_LENGTH = 4_096;
/** A name every broker accepts as a header: NATS headers are HTTP-like lines, AMQP table keys are short strings. */
const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Checks an event's headers: a plain object of at most 32 string values of at most 4 096 characters
 * with no control characters (a CR or LF would split a NATS header line), under names of letters,
 * digits, `.`, `_` and `-`. Returns a frozen copy, or `undefined` when there are none.
 */
export function checkEventHeaders(code: OncelyErrorCode, headers: unknown): Readonly<Record<string, string>> | undefined {
  if (headers === undefined || headers === null) return undefined;
  if (typeof headers !== 'object' || Array.isArray(headers)) {
    throw new OncelyError(code, 'oncely: event headers must be an object of string values');
  }
  const entries = Object.entries(headers);
  if (entries.length > MAX_EVENT_HEADERS) throw new OncelyError(code, `oncely: an event carries at most ${MAX_EVENT_HEADERS} headers`);
  if (entries.length === 0) return undefined;
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name)) throw new OncelyError(code, `oncely: header name ${JSON.stringify(name)} must be letters, digits, '.', '_' or '-'`);
    if (typeof value !== 'string') throw new OncelyError(code, `oncely: header ${name} must be a string, got ${typeof value}`);
    if (value.length > MAX_HEADER_VALUE_LENGTH || hasControlCharacter(value)) {
      throw new OncelyError(code, `oncely: header ${name} must be at most ${MAX_HEADER_VALUE_LENGTH} characters with no control characters`);
    }
  }
  return Object.freeze(Object.fromEntries(entries)) as Readonly<Record<string, string>>;
}
