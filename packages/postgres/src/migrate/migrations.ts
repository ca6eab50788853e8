import { OncelyError } from '@oncely/core';
import { shippedMigrations } from 'virtual:oncely-postgres-migrations';
import { quoteIdentifier } from '../identifiers/identifier.js';

/** One shipped `.sql` file, rendered for a schema and table names. */
export interface Migration {
  /** File name, e.g. `0001_idempotency.sql`; files apply in name order. */
  readonly name: string;
  readonly sql: string;
}

/** Options of {@link migrations} and `migrate`. */
export interface MigrateOptions {
  /** Schema the objects are created in, created if missing (default `public`). */
  readonly schema?: string;
  /**
   * Your names for the shipped tables: `{ oncely_idempotency: 'payment_keys' }`. Every identifier that
   * starts with a shipped table name is renamed with it, so its indexes follow (`payment_keys_expires_at_idx`).
   */
  readonly tables?: Readonly<Record<string, string>>;
}

/** Escapes nothing: shipped names are plain identifiers, checked before they reach the pattern. */
const alternation = (names: readonly string[]) => [...names].sort((a, b) => b.length - a.length).join('|');

/**
 * The shipped migrations, in name order, with the table renames of `options` applied. Use it to copy
 * the exact SQL `migrate` runs into another migration tool. Unknown shipped names and invalid
 * identifiers throw an `invalid_option` error.
 */
export function migrations(options: Pick<MigrateOptions, 'tables'> = {}): readonly Migration[] {
  const renames = new Map(Object.entries(options.tables ?? {}));
  if (renames.size === 0) return shippedMigrations.map(({ name, sql }) => ({ name, sql }));
  const everything = shippedMigrations.map((file) => file.sql).join('\n');
  for (const [shipped, yours] of renames) {
    quoteIdentifier(shipped, 'shipped table name');
    quoteIdentifier(yours, 'table');
    if (!new RegExp(`\\b${shipped}\\b`).test(everything)) {
      throw new OncelyError('invalid_option', `oncely/postgres: no shipped migration creates a table named ${shipped}`);
    }
  }
  const pattern = new RegExp(`\\b(${alternation([...renames.keys()])})(\\w*)`, 'g');
  return shippedMigrations.map(({ name, sql }) => ({
    name,
    sql: sql.replace(pattern, (_match, shipped: string, suffix: string) =>
      quoteIdentifier(`${renames.get(shipped)}${suffix}`, `name derived from ${shipped}${suffix}`),
    ),
  }));
}
