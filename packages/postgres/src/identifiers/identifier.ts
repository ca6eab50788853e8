import { OncelyError } from '@oncely/core';

declare const quotedName: unique symbol;

/** An identifier that passed {@link quoteIdentifier}: safe to place in SQL text. */
export type QuotedIdentifier = string & { readonly [quotedName]: true };

/** PostgreSQL truncates identifiers beyond NAMEDATALEN - 1 bytes, which would merge distinct names. */
export const MAX_IDENTIFIER_BYTES = 63;

/** Letters, digits and underscores, not starting with a digit: nothing that needs escaping. */
const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Validates a schema, table or index name and returns it double-quoted. Names are restricted to
 * ASCII letters, digits and `_` (at most 63 bytes), so the quoted form never needs escaping and
 * can never carry SQL; anything else throws an `invalid_option` {@link OncelyError}.
 */
export function quoteIdentifier(name: unknown, what = 'identifier'): QuotedIdentifier {
  if (typeof name !== 'string' || !PLAIN_IDENTIFIER.test(name) || name.length > MAX_IDENTIFIER_BYTES) {
    const shown = typeof name === 'string' ? JSON.stringify(name.slice(0, 80)) : typeof name;
    throw new OncelyError(
      'invalid_option',
      `oncely/postgres: the ${what} ${shown} is not a plain identifier (ASCII letters, digits and _, not starting with a digit, at most ${MAX_IDENTIFIER_BYTES} characters)`,
    );
  }
  return `"${name}"` as QuotedIdentifier;
}

/** `"schema"."table"`, both parts validated by {@link quoteIdentifier}. */
export function qualifiedName(schema: string, table: string): QuotedIdentifier {
  return `${quoteIdentifier(schema, 'schema')}.${quoteIdentifier(table, 'table')}` as QuotedIdentifier;
}
