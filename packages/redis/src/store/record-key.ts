import type { Scope } from '@oncely/core';

/**
 * Characters an escaped field must not contain: `%` starts an escape, `:` separates fields, braces
 * would end the hash tag, and lone surrogates would all collapse to U+FFFD in UTF-8.
 */
const UNSAFE = /[%:{}]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const escapeCharacter = (character: string): string => {
  const code = character.charCodeAt(0).toString(16).toUpperCase();
  return code.length <= 2 ? `%${code.padStart(2, '0')}` : `%u${code.padStart(4, '0')}`;
};

/** Any character {@link UNSAFE} might match: a cheap test that lets the usual field skip the replace. */
const MAYBE_UNSAFE = /[%:{}\uD800-\uDFFF]/;

/** Escapes one field so it contains no separator, no brace and no lone surrogate; `%` escapes itself. */
const escapeField = (field: string): string => (MAYBE_UNSAFE.test(field) ? field.replace(UNSAFE, escapeCharacter) : field);

/**
 * The Redis key of a record: `<prefix>{<tenant>:<principal>:<operation>:<key>}` with each field
 * escaped. Injective: an escaped field has no `:`, and every `%` opens an escape, so the four fields
 * (and, since the prefix has no brace, the prefix) can be read back from the key. The whole scope is
 * the hash tag, so a record lives in one Cluster slot and records spread over all slots.
 */
export function recordKey(prefix: string, scope: Scope): string {
  return `${prefix}{${escapeField(scope.tenant)}:${escapeField(scope.principal)}:${escapeField(scope.operation)}:${escapeField(scope.key)}}`;
}
