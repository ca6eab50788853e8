import { assertValidKey, isOncelyError } from '@oncely/core';

/** The header that carries the key (field names are case-insensitive; bindings look it up lowercased). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** What an `Idempotency-Key` field value holds. */
export type ParsedKey =
  | { readonly kind: 'absent' }
  | { readonly kind: 'valid'; readonly key: string }
  | { readonly kind: 'invalid'; readonly detail: string };

/** Optional whitespace around a field value (RFC 9110 OWS). */
const SURROUNDING_WHITESPACE = /^[ \t]+|[ \t]+$/g;
/** What follows a first value when a proxy joined two fields into one line (RFC 9110 §5.3). */
const LIST_SEPARATOR = /^[ \t]*,/;

const MORE_THAN_ONE: ParsedKey = { kind: 'invalid', detail: 'The request carries more than one Idempotency-Key field.' };

/**
 * Reads an `Idempotency-Key` field value. Accepts the draft's structured-field string
 * (`"8e03978e-40d5-43e8-bc93-6894a57f9324"`, RFC 8941 §3.3.3, with `\"` and `\\` escapes) and a bare
 * token (`8e03978e-...`), then applies core's key rules (1–255 visible ASCII characters). Two fields in
 * one request arrive joined by a comma (`k1, k2`, `k1,k2`, `"k1", "k2"`) and are rejected, as the draft
 * forbids more than one; hence a bare key cannot hold a comma (a quoted one can: `"a,b"` is one string).
 */
export function parseIdempotencyKey(value: string | readonly string[] | undefined | null): ParsedKey {
  if (value === undefined || value === null) return { kind: 'absent' };
  if (typeof value !== 'string') return MORE_THAN_ONE;
  const trimmed = value.replace(SURROUNDING_WHITESPACE, '');
  if (!trimmed.startsWith('"') && trimmed.includes(',')) return MORE_THAN_ONE;
  const unquoted: ParsedKey = trimmed.startsWith('"') ? parseSfString(trimmed) : { kind: 'valid', key: trimmed };
  if (unquoted.kind !== 'valid') return unquoted;
  try {
    assertValidKey(unquoted.key);
  } catch (error) {
    if (!isOncelyError(error)) throw error;
    return { kind: 'invalid', detail: invalidKeyDetail(error.code) };
  }
  return unquoted;
}

function invalidKeyDetail(code: string): string {
  switch (code) {
    case 'key_too_long':
      return 'The Idempotency-Key is longer than 255 characters.';
    case 'missing_key':
      return 'The Idempotency-Key is empty.';
    default:
      return 'The Idempotency-Key may contain only visible ASCII characters (0x21-0x7E): no spaces or control characters.';
  }
}

/** Parses an RFC 8941 sf-string that must make up the whole field value (parameters are not accepted). */
function parseSfString(text: string): ParsedKey {
  let key = '';
  for (let index = 1; index < text.length; index++) {
    const char = text[index]!;
    if (char === '\\') {
      const next = text[index + 1];
      if (next !== '"' && next !== '\\') return malformed('only \\" and \\\\ may be escaped');
      key += next;
      index++;
    } else if (char === '"') {
      if (index !== text.length - 1) {
        return LIST_SEPARATOR.test(text.slice(index + 1)) ? MORE_THAN_ONE : malformed('nothing may follow the closing quote');
      }
      return { kind: 'valid', key };
    } else {
      const code = char.charCodeAt(0);
      if (code < 0x20 || code > 0x7e) return malformed('a string holds printable ASCII only');
      key += char;
    }
  }
  return malformed('the closing quote is missing');
}

function malformed(reason: string): ParsedKey {
  return { kind: 'invalid', detail: `The Idempotency-Key is not a valid structured-field string: ${reason}.` };
}
