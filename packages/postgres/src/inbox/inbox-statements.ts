import type { QuotedIdentifier } from '../identifiers/identifier.js';
import { msFromNow } from '../outbox/outbox-statements.js';
import { sql } from '../sql/sql-tag.js';

/** The SQL of one inbox, written against its table. */
export interface InboxStatements {
  /** $1 consumer, $2 event id. One row affected: new; none: a duplicate (after waiting for a concurrent insert to end). */
  readonly record: string;
  /** $1 consumer, $2 event ids, in order: one row each, in one statement; answers the ids that were new. */
  readonly recordMany: string;
  /** $1 older-than ms, $2 limit. */
  readonly purge: string;
}

/** One statement per call. */
export function inboxStatements(table: QuotedIdentifier): InboxStatements {
  return {
    record: sql`INSERT INTO ${table} (consumer, event_id, processed_at) VALUES ($1, $2, statement_timestamp())
      ON CONFLICT (consumer, event_id) DO NOTHING`,
    recordMany: sql`INSERT INTO ${table} (consumer, event_id, processed_at)
      SELECT $1, e.event_id, statement_timestamp() FROM unnest($2::text[]) WITH ORDINALITY AS e(event_id, n) ORDER BY e.n
      ON CONFLICT (consumer, event_id) DO NOTHING
      RETURNING event_id`,
    purge: sql`WITH doomed AS (
        SELECT consumer, event_id FROM ${table}
        WHERE processed_at < ${msFromNow(sql`-$1`)}
        ORDER BY processed_at LIMIT $2
        FOR UPDATE SKIP LOCKED
      )
      DELETE FROM ${table} i USING doomed WHERE i.consumer = doomed.consumer AND i.event_id = doomed.event_id`,
  };
}
