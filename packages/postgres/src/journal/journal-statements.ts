import type { QuotedIdentifier } from '../identifiers/identifier.js';
import { type Fragment, sql } from '../sql/sql-tag.js';

/** An entry as the journal reports it: JSON as text and times as epoch ms, whatever the driver's parsers. */
const entryColumns = sql`operation_id, idempotency_key, state, attempts, request_json, outcome_json, last_error,
    floor(extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
    floor(extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms`;

/** `$n` milliseconds before this statement's instant, on the database clock. */
const msAgo = (param: Fragment) => sql`statement_timestamp() - ${param}::float8 * interval '1 millisecond'`;

/** The SQL of one journal, written against its table. */
export interface JournalStatements {
  /** Insert-or-read: $1 id, $2 key, $3 request JSON. `changed` is true when this statement inserted. */
  readonly begin: string;
  /** $1 id. */
  readonly get: string;
  /** Counts an attempt on an open entry. $1 id. `changed` false: read back unchanged (final, or absent). */
  readonly attempt: string;
  /** Settles an open entry. $1 id, $2 state, $3 outcome JSON. */
  readonly complete: string;
  /** Marks an open entry unknown. $1 id, $2 last error. */
  readonly unknown: string;
  /** $1 stale-after ms, $2 limit. */
  readonly unresolved: string;
  /** $1 older-than ms, $2 limit; returns how many rows it deleted as `count`. */
  readonly purge: string;
}

/**
 * One statement per call. A change that finds nothing to change reads the row back in the same
 * statement; `changed` tells the two apart, and a read that saw an older snapshot than the change
 * waited for is detected by the caller (an open state with `changed` false) and run again.
 */
export function journalStatements(table: QuotedIdentifier): JournalStatements {
  const open = sql`state IN ('pending', 'unknown')`;
  const change = (assignments: Fragment) => sql`WITH changed AS (
      UPDATE ${table} SET ${assignments}, updated_at = statement_timestamp()
      WHERE operation_id = $1 AND ${open}
      RETURNING ${entryColumns}
    )
    SELECT *, true AS changed FROM changed
    UNION ALL
    SELECT ${entryColumns}, false AS changed FROM ${table}
    WHERE operation_id = $1 AND NOT EXISTS (SELECT 1 FROM changed)`;
  return {
    begin: sql`WITH inserted AS (
        INSERT INTO ${table} (operation_id, idempotency_key, state, attempts, request_json, created_at, updated_at)
        VALUES ($1, $2, 'pending', 0, $3, statement_timestamp(), statement_timestamp())
        ON CONFLICT (operation_id) DO NOTHING
        RETURNING ${entryColumns}
      )
      SELECT *, true AS changed FROM inserted
      UNION ALL
      SELECT ${entryColumns}, false AS changed FROM ${table}
      WHERE operation_id = $1 AND NOT EXISTS (SELECT 1 FROM inserted)`,
    get: sql`SELECT ${entryColumns} FROM ${table} WHERE operation_id = $1`,
    attempt: change(sql`attempts = attempts + 1, state = 'pending', last_error = NULL`),
    complete: change(sql`state = $2, outcome_json = $3, last_error = NULL`),
    unknown: change(sql`state = 'unknown', last_error = $2`),
    unresolved: sql`SELECT ${entryColumns} FROM ${table}
      WHERE state = 'unknown' OR (state = 'pending' AND updated_at <= ${msAgo(sql`$1`)})
      ORDER BY updated_at, operation_id
      LIMIT $2`,
    purge: sql`WITH doomed AS (
        SELECT operation_id FROM ${table}
        WHERE state IN ('succeeded', 'failed') AND updated_at <= ${msAgo(sql`$1`)}
        ORDER BY updated_at
        LIMIT $2
        FOR UPDATE SKIP LOCKED
      ), deleted AS (
        DELETE FROM ${table} WHERE operation_id IN (SELECT operation_id FROM doomed) RETURNING 1
      )
      SELECT count(*)::int AS count FROM deleted`,
  };
}
