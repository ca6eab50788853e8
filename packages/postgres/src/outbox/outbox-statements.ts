import type { QuotedIdentifier } from '../identifiers/identifier.js';
import { type Fragment, sql } from '../sql/sql-tag.js';

/** `$n` milliseconds from this statement's instant, on the database clock. */
export const msFromNow = (param: Fragment) => sql`statement_timestamp() + ${param}::float8 * interval '1 millisecond'`;

/** An event as the source reports it: JSON as text and times as epoch ms, whatever the driver's parsers. */
const eventColumns = (alias: Fragment) => sql`${alias}.event_id, ${alias}.aggregate_type, ${alias}.aggregate_id,
    ${alias}.aggregate_seq::float8 AS aggregate_seq, ${alias}.event_type, ${alias}.payload::text AS payload,
    floor(extract(epoch FROM ${alias}.created_at) * 1000)::float8 AS created_ms, ${alias}.attempts, ${alias}.headers::text AS headers`;

/** Still leased to the relay named in $1. */
const heldBy = (alias: Fragment) =>
  sql`${alias}.lease_owner = $1 AND ${alias}.lease_expires_at > statement_timestamp() AND ${alias}.published_at IS NULL`;

/** The objects of one outbox, as `migrate()` names them after its table. */
export interface OutboxTables {
  readonly outbox: QuotedIdentifier;
  /** `<table>_sequences`: the last sequence per aggregate. */
  readonly sequences: QuotedIdentifier;
  /** `<table>_aggregates`: the aggregates that may have unpublished events, and when each is claimable. */
  readonly aggregates: QuotedIdentifier;
  /** `<table>_claim(owner, limit, lease_ms)`: the claim function. */
  readonly claim: QuotedIdentifier;
}

/**
 * The statement's transaction commits without waiting for its WAL flush. Only the relay's bookkeeping
 * (claim, mark, reschedule, dead letter, release) uses it: a crash can lose such a commit, which costs a
 * redelivery, never an event. Enqueue, requeue and the inbox keep the server's setting.
 */
const relaxedCommit = sql`set_config('synchronous_commit', 'off', true)`;

/**
 * Sets `claimable_at` to now for the aggregates of the rows of `changed`, so the next claim looks at
 * them again, and answers how many rows changed; a relay's bookkeeping, so with a relaxed commit.
 */
const wake = (aggregates: QuotedIdentifier) => sql`woken AS (
        UPDATE ${aggregates} a SET claimable_at = statement_timestamp(), lease_owner = NULL
        FROM (SELECT DISTINCT aggregate_type, aggregate_id FROM changed) c
        WHERE a.aggregate_type = c.aggregate_type AND a.aggregate_id = c.aggregate_id
      )
      SELECT count(*)::float8 AS changed, ${relaxedCommit} AS relaxed FROM changed`;

/** The SQL of one outbox, written against its tables. */
export interface OutboxStatements {
  /**
   * Bumps the aggregate's sequence (or checks the caller's, which must be higher) and inserts the
   * event, in one statement. $1 event id, $2 aggregate type, $3 aggregate id, $4 caller's sequence or
   * NULL, $5 event type, $6 payload JSON, $7 headers JSON or NULL and, with wake-ups, $8 the NOTIFY
   * channel (delivered at commit). No row: the caller's sequence was not higher than the last one.
   */
  readonly enqueue: string;
  /** Leases up to $2 claimable events to $1 for $3 ms: whole aggregates, each one's next events in sequence order. */
  readonly claim: string;
  /**
   * $1 event ids. Like every relay write below, answers `changed` (events changed) and wakes their
   * aggregates; an aggregate this mark leaves empty loses its row instead, so no claim visits it.
   */
  readonly markPublished: string;
  /** $1 owner, $2 event ids, $3 delays in ms, $4 errors. */
  readonly reschedule: string;
  /** $1 owner, $2 event ids, $3 errors. */
  readonly deadLetter: string;
  /** $1 owner, $2 event ids. */
  readonly release: string;
  readonly stats: string;
  /** $1 older-than ms, $2 limit. */
  readonly purgePublished: string;
  /** $1 event ids: dead letters become claimable again with a fresh attempt count. */
  readonly requeue: string;
}

/**
 * One statement per call. The claim is the heart (`sql/0005_outbox_aggregates.sql`): it locks the
 * aggregates that have waited longest with `FOR UPDATE SKIP LOCKED`, so concurrent relays split them
 * instead of queueing, and leases each one's unpublished events in sequence order up to the first that
 * is dead-lettered, not due or leased, on the database clock, so a dead relay's events become
 * claimable again. It reads only what it takes: its cost does not grow with the backlog.
 */
export function outboxStatements(tables: OutboxTables, notify: boolean): OutboxStatements {
  const { outbox, sequences, aggregates, claim } = tables;
  const o = sql`o`;
  const notification = notify ? sql`, pg_notify($8, '')::text AS notified` : sql``;
  return {
    enqueue: sql`WITH seq AS (
        INSERT INTO ${sequences} AS s (aggregate_type, aggregate_id, last_seq)
        VALUES ($2, $3, coalesce($4::bigint, 1))
        ON CONFLICT (aggregate_type, aggregate_id) DO UPDATE
          SET last_seq = coalesce($4::bigint, s.last_seq + 1)
          WHERE $4::bigint IS NULL OR s.last_seq < $4::bigint
        -- xmax is 0 on a row this statement inserted: the aggregate's first event (or its numbering restarted).
        RETURNING last_seq, xmax = 0 AS fresh
      ), inserted AS (
        INSERT INTO ${outbox} (event_id, aggregate_type, aggregate_id, aggregate_seq, event_type, payload, headers, created_at, next_attempt_at)
        SELECT $1, $2, $3, seq.last_seq, $5, $6::text::jsonb, $7::text::jsonb, statement_timestamp(), statement_timestamp() FROM seq
        RETURNING aggregate_seq::float8 AS aggregate_seq, floor(extract(epoch FROM created_at) * 1000)::float8 AS created_ms
      ), listed AS (
        -- Reads seq, so it runs once the sequence row is locked; DO NOTHING takes no lock on an existing row.
        -- A missing row means nothing of the aggregate was unpublished: the claim may start at this event.
        INSERT INTO ${aggregates} (aggregate_type, aggregate_id, published_seq) SELECT $2, $3, seq.last_seq - 1 FROM seq
        WHERE NOT seq.fresh
        ON CONFLICT DO NOTHING
      ), renumbered AS (
        -- A first sequence: a row already there outlived its numbering (the sequences were emptied
        -- without it), and its bound must not hide the new events.
        INSERT INTO ${aggregates} (aggregate_type, aggregate_id, published_seq) SELECT $2, $3, seq.last_seq - 1 FROM seq
        WHERE seq.fresh
        ON CONFLICT (aggregate_type, aggregate_id) DO UPDATE SET published_seq = excluded.published_seq, claimable_at = statement_timestamp(), lease_owner = NULL
      )
      SELECT inserted.*${notification} FROM inserted`,
    claim: sql`SELECT ${eventColumns(o)} FROM ${claim}($1, $2, $3::float8) o`,
    markPublished: sql`WITH changed AS (
        UPDATE ${outbox} SET published_at = statement_timestamp(), lease_owner = NULL, lease_expires_at = NULL
        WHERE event_id = ANY($1::text[]) AND published_at IS NULL
        RETURNING aggregate_type, aggregate_id, aggregate_seq
      ), touched AS (
        SELECT aggregate_type, aggregate_id, max(aggregate_seq) AS last_marked FROM changed GROUP BY aggregate_type, aggregate_id
      ), emptied AS (
        -- This mark published the aggregate's last sequence and nothing older waits. An enqueue in flight
        -- holds the sequence row (skipped); one that committed since this statement's snapshot moved
        -- last_seq, and the lock re-checks the condition on that newest row (READ COMMITTED).
        SELECT s.aggregate_type, s.aggregate_id FROM ${sequences} s JOIN touched t USING (aggregate_type, aggregate_id)
        WHERE s.last_seq = t.last_marked AND NOT EXISTS (
          SELECT 1 FROM ${outbox} o
          WHERE o.aggregate_type = t.aggregate_type AND o.aggregate_id = t.aggregate_id AND o.published_at IS NULL
            AND o.event_id <> ALL($1::text[])
        )
        FOR SHARE OF s SKIP LOCKED
      ), forgotten AS (
        DELETE FROM ${aggregates} a USING emptied e WHERE a.aggregate_type = e.aggregate_type AND a.aggregate_id = e.aggregate_id
      ), woken AS (
        UPDATE ${aggregates} a SET claimable_at = statement_timestamp(), lease_owner = NULL
        FROM touched t
        WHERE a.aggregate_type = t.aggregate_type AND a.aggregate_id = t.aggregate_id
          AND NOT EXISTS (SELECT 1 FROM emptied e WHERE e.aggregate_type = t.aggregate_type AND e.aggregate_id = t.aggregate_id)
      )
      SELECT count(*)::float8 AS changed, ${relaxedCommit} AS relaxed FROM changed`,
    reschedule: sql`WITH changed AS (
        UPDATE ${outbox} o
        SET next_attempt_at = ${msFromNow(sql`r.delay_ms`)}, last_error = r.error, lease_owner = NULL, lease_expires_at = NULL
        FROM unnest($2::text[], $3::float8[], $4::text[]) AS r(event_id, delay_ms, error)
        WHERE o.event_id = r.event_id AND ${heldBy(o)}
        RETURNING o.aggregate_type, o.aggregate_id
      ), ${wake(aggregates)}`,
    deadLetter: sql`WITH changed AS (
        UPDATE ${outbox} o
        SET dead_lettered_at = statement_timestamp(), last_error = r.error, lease_owner = NULL, lease_expires_at = NULL
        FROM unnest($2::text[], $3::text[]) AS r(event_id, error)
        WHERE o.event_id = r.event_id AND ${heldBy(o)}
        RETURNING o.aggregate_type, o.aggregate_id
      ), ${wake(aggregates)}`,
    release: sql`WITH changed AS (
        UPDATE ${outbox} o
        SET attempts = greatest(o.attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL
        WHERE o.event_id = ANY($2::text[]) AND ${heldBy(o)}
        RETURNING o.aggregate_type, o.aggregate_id
      ), ${wake(aggregates)}`,
    stats: sql`SELECT count(*)::float8 AS unpublished,
        count(*) FILTER (WHERE dead_lettered_at IS NOT NULL)::float8 AS dead_lettered,
        coalesce(floor(extract(epoch FROM statement_timestamp() - min(created_at)) * 1000), 0)::float8 AS oldest_ms
      FROM ${outbox} WHERE published_at IS NULL`,
    purgePublished: sql`WITH doomed AS (
        SELECT event_id FROM ${outbox}
        WHERE published_at IS NOT NULL AND published_at < ${msFromNow(sql`-$1`)}
        ORDER BY published_at LIMIT $2
        FOR UPDATE SKIP LOCKED
      )
      DELETE FROM ${outbox} o USING doomed WHERE o.event_id = doomed.event_id`,
    requeue: sql`WITH changed AS (
        UPDATE ${outbox}
        SET dead_lettered_at = NULL, attempts = 0, next_attempt_at = statement_timestamp()
        WHERE event_id = ANY($1::text[]) AND dead_lettered_at IS NOT NULL AND published_at IS NULL
        RETURNING aggregate_type, aggregate_id
      ), woken AS (
        INSERT INTO ${aggregates} (aggregate_type, aggregate_id) SELECT DISTINCT aggregate_type, aggregate_id FROM changed
        ON CONFLICT (aggregate_type, aggregate_id) DO UPDATE SET claimable_at = statement_timestamp(), lease_owner = NULL
      )
      SELECT count(*)::float8 AS changed FROM changed`,
  };
}
