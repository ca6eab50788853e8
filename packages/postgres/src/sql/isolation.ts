import { OncelyError } from '@oncely/core';

/** PostgreSQL's four isolation levels, as `SET TRANSACTION` spells them. */
const LEVELS = ['READ UNCOMMITTED', 'READ COMMITTED', 'REPEATABLE READ', 'SERIALIZABLE'] as const;

/**
 * The statement that sets `level` (any case and spacing an ORM spells it: `'SERIALIZABLE'`,
 * `'repeatable read'`, Prisma's `'RepeatableRead'`) for the transaction it starts, or null for none. It must be the
 * first statement of the claim's message: PostgreSQL refuses an isolation level once a query has
 * taken a snapshot, so `BEGIN ISOLATION LEVEL …` after the claim would fail. The level is matched
 * against the four names and written from that list, never from the input.
 */
export function setIsolation(level: string | undefined): string | null {
  if (level === undefined) return null;
  const spelled = String(level)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .trim()
    .replace(/[\s_]+/g, ' ')
    .toUpperCase();
  const known = LEVELS.find((name) => name === spelled);
  if (known === undefined) {
    throw new OncelyError('invalid_option', `oncely/postgres: isolation level must be one of ${LEVELS.join(', ')}`);
  }
  return `SET TRANSACTION ISOLATION LEVEL ${known}`;
}
