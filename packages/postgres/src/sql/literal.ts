/** A value oncely writes into a simple-protocol message instead of binding it. */
export type LiteralValue = string | number | boolean | null;

/** A string the simple protocol cannot carry: PostgreSQL text has no U+0000, and a message ends at the first NUL byte. */
export class UnrepresentableLiteral extends Error {
  override readonly name = 'UnrepresentableLiteral';
}

/** The characters an escape string doubles. */
const QUOTING = /[\\']/;
const QUOTING_ALL = /[\\']/g;

/**
 * `value` as SQL literal text, read exactly as pg binds a parameter: as text of unknown type, which
 * the parameter's (or the column's) input function converts. Always an escape string (`E'…'`) with
 * quotes and backslashes doubled, so it reads the same whatever `standard_conforming_strings` says.
 */
export function literal(value: LiteralValue): string {
  if (value === null) return 'NULL';
  const text = typeof value === 'string' ? value : String(value);
  if (text.includes('\u0000')) {
    throw new UnrepresentableLiteral('oncely/postgres: PostgreSQL text cannot hold the character U+0000');
  }
  // Most values (scope, token, fingerprint, numbers) have nothing to double: skip the replace.
  return QUOTING.test(text) ? `E'${text.replace(QUOTING_ALL, '$&$&')}'` : `E'${text}'`;
}

/** True when every value can travel as a {@link literal}. */
export const literalValues = (values: readonly unknown[]): values is readonly LiteralValue[] =>
  values.every((value) => value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean');
