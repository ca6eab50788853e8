import type { QuotedIdentifier } from '../identifiers/identifier.js';
import { type Fragment, sql } from './sql-tag.js';

/** Every statement names the record by its scope in the same four parameters. */
const scope = sql`tenant = $1 AND principal = $2 AND operation = $3 AND idempotency_key = $4`;

/** Judged by the database clock: `statement_timestamp()` is one instant for the whole statement. */
const msFromNow = (param: Fragment) => sql`statement_timestamp() + ${param}::float8 * interval '1 millisecond'`;

/** Free to claim: expired, or in progress under a lapsed lease by the same request ($5 = fingerprint); `row.` qualifies where names clash. */
const claimableRow = (row: Fragment) => sql`(${row}expires_at <= statement_timestamp()
      OR (${row}state = 'in_progress' AND ${row}lease_expires_at <= statement_timestamp() AND ${row}fingerprint = $5))`;
const claimable = claimableRow(sql``);

/** Still held by the token in $5: in progress, lease running, record live. */
const heldBy = sql`state = 'in_progress' AND lease_token = $5
    AND lease_expires_at > statement_timestamp() AND expires_at > statement_timestamp()`;

/** A record as the store reports it; JSON travels as text and times as epoch milliseconds, whatever the driver's type parsers. */
const recordColumns = sql`fingerprint, state, fence,
    response_status, response_headers::text AS response_headers, response_body::text AS response_body,
    body_omitted, resource_id,
    floor(extract(epoch FROM lease_expires_at - statement_timestamp()) * 1000)::float8 AS lease_remaining_ms,
    floor(extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
    floor(extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms`;

/** The SQL of one store, written against its table. */
export interface StoreStatements {
  /**
   * Claim-or-read in one statement. $1-$4 scope, $5 fingerprint, $6 token, $7 lease ms, $8 retention
   * ms. Returns one row: `outcome` is `claimed`, `existing`, or NULL when a concurrent commit landed
   * between the snapshot and the write (the caller runs the statement again; a fresh snapshot sees
   * that commit).
   */
  readonly claim: string;
  /** `claim` whose waits are bounded by $9, the `lock_timeout` for this statement alone (transactional `lockTimeoutMs`). */
  readonly claimBounded: string;
  /**
   * `claim` for a connection no one else writes on while the transaction is open (PGlite): one
   * upsert that returns `fence` only when it inserted or took over the record, and nothing otherwise
   * (then `claim` reads what is there). Same parameters as `claim`; half its work on a first request.
   */
  readonly claimFresh: string;
  /** Lease mode: $5 token, $6 state, $7 status, $8 headers, $9 body, $10 body omitted, $11 resource id, $12 retention ms. */
  readonly complete: string;
  /** Transactional mode: `complete` where the open transaction's row lock, not the lease clock, is the ownership. */
  readonly save: string;
  /**
   * `save` that fails (22P02, a cast of a sentinel) instead of updating nothing: sent with COMMIT in
   * one message, its failure aborts the transaction, so COMMIT cannot save the business writes alone.
   */
  readonly saveOrFail: string;
  /**
   * Transactional mode, sent between the claim and BEGIN in one message: fails (22P02) unless the
   * token in $5 holds the record, so BEGIN runs only for a won claim and a replay opens no transaction.
   */
  readonly claimed: string;
  /**
   * Transactional mode's one-write claim, sent ahead of `get`, `unheld` and BEGIN:
   * the transaction-level advisory lock on a 64-bit hash of the table and scope ($1-$4), so a
   * duplicate waits here until the holder ends. Released at COMMIT, ROLLBACK or backend death.
   */
  readonly lock: string;
  /** `lock` whose wait is bounded by $5, the `lock_timeout` for this statement alone (transactional `lockTimeoutMs`). */
  readonly lockBounded: string;
  /**
   * Sent after `lock`, so its snapshot sees every commit the lock waited for: the fence the request
   * claims ($5 fingerprint) when the key is free, or a failure (22P02) that keeps BEGIN from running:
   * the key holds a live record, or the transaction is not READ COMMITTED (a snapshot older than the lock).
   */
  readonly unheld: string;
  /**
   * The one write of a one-write claim, sent with COMMIT: the completed record inserted, or written
   * over the expired or lapsed row `unheld` saw; fails (22P02) when the row changed since. $1-$4
   * scope, $5 fingerprint, $6 fence, $7 state, $8 status, $9 headers, $10 body, $11 body omitted,
   * $12 resource id, $13 retention ms.
   */
  readonly insertOrFail: string;
  /** $5 token. */
  readonly release: string;
  /** $5 token, $6 lease ms. */
  readonly extend: string;
  readonly get: string;
  /** $1 limit. */
  readonly purge: string;
}

const outcomeColumns = (table: QuotedIdentifier, owned: Fragment) => sql`UPDATE ${table} SET
    state = $6, lease_token = NULL, lease_expires_at = NULL,
    response_status = $7, response_headers = $8::text::json, response_body = $9::text::json,
    body_omitted = $10, resource_id = $11,
    expires_at = ${msFromNow(sql`$12`)}
  WHERE ${scope} AND ${owned}
  RETURNING fence`;

/** Builds the store's statements for `table`, a validated `"schema"."table"`. */
export function storeStatements(table: QuotedIdentifier): StoreStatements {
  /**
   * With `bounded`, the claim sets `lock_timeout` ($9) for its own waits and restores it in the same
   * statement; without, it leaves the setting alone and skips that work (a third of a replay's cost).
   */
  const claimStatement = (bounded: boolean) => {
    const settingsJoin = bounded ? sql`
  FROM settings` : sql``;
    return sql`WITH ${
      bounded
        ? sql`settings AS (
  SELECT previous, set_config('lock_timeout', coalesce($9::text, previous), true) AS applied
  FROM (SELECT current_setting('lock_timeout') AS previous OFFSET 0) AS current_value
),
`
        : sql``
    }existing AS (
  SELECT * FROM ${table} WHERE ${scope}
),
taken AS (
  UPDATE ${table} AS r SET
    fingerprint = $5::text, state = 'in_progress', lease_token = $6::text,
    lease_expires_at = ${msFromNow(sql`$7`)},
    fence = CASE WHEN expires_at <= statement_timestamp() THEN 1 ELSE fence + 1 END,
    created_at = CASE WHEN expires_at <= statement_timestamp() THEN statement_timestamp() ELSE created_at END,
    expires_at = ${msFromNow(sql`$8`)},
    response_status = NULL, response_headers = NULL, response_body = NULL, body_omitted = false, resource_id = NULL${settingsJoin}
  WHERE ${scope} AND ${claimable}
  RETURNING r.*
),
inserted AS (
  INSERT INTO ${table} (tenant, principal, operation, idempotency_key, fingerprint, state,
                        lease_token, lease_expires_at, fence, created_at, expires_at)
  SELECT $1::text, $2::text, $3::text, $4::text, $5::text, 'in_progress',
         $6::text, ${msFromNow(sql`$7`)}, 1, statement_timestamp(), ${msFromNow(sql`$8`)}${settingsJoin}
  -- Only when the snapshot saw no row; a row committed since then makes this do nothing.
  WHERE NOT EXISTS (SELECT FROM existing)
  ON CONFLICT (tenant, principal, operation, idempotency_key) DO NOTHING
  RETURNING *
),
decided AS (
  SELECT 'claimed' AS outcome, * FROM taken
  UNION ALL SELECT 'claimed', * FROM inserted
  UNION ALL SELECT 'existing', * FROM existing WHERE NOT ${claimable}
)
SELECT outcome, ${recordColumns}${
      bounded
        ? sql`,
  -- Restore lock_timeout once both writes have stopped waiting, so it never bounds the handler's SQL.
  CASE WHEN (SELECT count(*) FROM taken) + (SELECT count(*) FROM inserted) >= 0
       THEN set_config('lock_timeout', (SELECT previous FROM settings), true) END AS lock_timeout`
        : sql``
    }
FROM (SELECT) AS one_row LEFT JOIN decided ON true`;
  };

  const save = outcomeColumns(table, sql`state = 'in_progress' AND lease_token = $5`);
  /** One lock per table and scope; the array's text form quotes each part, so distinct scopes hash distinct texts (collisions only serialize). */
  const lockKey = sql`hashtextextended(ARRAY['${table}', $1::text, $2::text, $3::text, $4::text]::text, 0)`;
  return {
    claim: claimStatement(false),
    claimBounded: claimStatement(true),
    claimFresh: sql`INSERT INTO ${table} AS r (tenant, principal, operation, idempotency_key, fingerprint, state,
                      lease_token, lease_expires_at, fence, created_at, expires_at)
  VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, 'in_progress',
          $6::text, ${msFromNow(sql`$7`)}, 1, statement_timestamp(), ${msFromNow(sql`$8`)})
  ON CONFLICT (tenant, principal, operation, idempotency_key) DO UPDATE SET
    fingerprint = excluded.fingerprint, state = 'in_progress', lease_token = excluded.lease_token,
    lease_expires_at = excluded.lease_expires_at,
    fence = CASE WHEN r.expires_at <= statement_timestamp() THEN 1 ELSE r.fence + 1 END,
    created_at = CASE WHEN r.expires_at <= statement_timestamp() THEN statement_timestamp() ELSE r.created_at END,
    expires_at = excluded.expires_at,
    response_status = NULL, response_headers = NULL, response_body = NULL, body_omitted = false, resource_id = NULL
  WHERE ${claimableRow(sql`r.`)}
  RETURNING r.fence`,
    complete: outcomeColumns(table, heldBy),
    save,
    saveOrFail: sql`WITH saved AS (${save})
SELECT CASE WHEN count(*) = 1 THEN 1 ELSE ('oncely: the claimed record changed inside the transaction: ' || count(*))::int END AS saved
FROM saved`,
    claimed: sql`SELECT CASE WHEN count(*) = 1 THEN 1 ELSE ('oncely: the claim was not won: ' || count(*))::int END AS claimed
FROM ${table} WHERE ${scope} AND state = 'in_progress' AND lease_token = $5`,
    lock: sql`SELECT pg_advisory_xact_lock(${lockKey}) AS locked`,
    lockBounded: sql`SELECT set_config('lock_timeout', previous, true) AS locked FROM (
  SELECT previous, pg_advisory_xact_lock(${lockKey}) AS held FROM (
    SELECT current_setting('lock_timeout') AS previous, set_config('lock_timeout', $5::text, true) AS applied OFFSET 0
  ) AS applied OFFSET 0
) AS waited`,
    unheld: sql`SELECT CASE
    WHEN current_setting('transaction_isolation') NOT IN ('read committed', 'read uncommitted')
      THEN ('oncely: the claim needs read committed, not ' || current_setting('transaction_isolation'))::int
    WHEN count(*) = 0 OR bool_and(expires_at <= statement_timestamp()) THEN 1
    WHEN bool_and(state = 'in_progress' AND lease_expires_at <= statement_timestamp() AND fingerprint = $5::text) THEN max(fence) + 1
    ELSE ('oncely: the claim was not won: ' || count(*))::int
  END AS claimed_fence
FROM ${table} WHERE ${scope}`,
    insertOrFail: sql`WITH saved AS (
  INSERT INTO ${table} AS r (tenant, principal, operation, idempotency_key, fingerprint, state, fence, created_at, expires_at,
                        response_status, response_headers, response_body, body_omitted, resource_id)
  VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $7::text, $6::int, statement_timestamp(), ${msFromNow(sql`$13`)},
          $8::smallint, $9::text::json, $10::text::json, $11::boolean, $12::text)
  ON CONFLICT (tenant, principal, operation, idempotency_key) DO UPDATE SET
    fingerprint = excluded.fingerprint, state = excluded.state, lease_token = NULL, lease_expires_at = NULL, fence = excluded.fence,
    created_at = CASE WHEN r.expires_at <= statement_timestamp() THEN statement_timestamp() ELSE r.created_at END,
    expires_at = excluded.expires_at, response_status = excluded.response_status, response_headers = excluded.response_headers,
    response_body = excluded.response_body, body_omitted = excluded.body_omitted, resource_id = excluded.resource_id
  -- Only the row the claim saw free: expired (fence 1), or the lapsed lease it takes over (fence + 1).
  WHERE (r.expires_at <= statement_timestamp() AND excluded.fence = 1)
     OR (r.state = 'in_progress' AND r.lease_expires_at <= statement_timestamp()
         AND r.fingerprint = excluded.fingerprint AND r.fence + 1 = excluded.fence)
  RETURNING fence
)
SELECT CASE WHEN count(*) = 1 THEN 1 ELSE ('oncely: the claimed record changed inside the transaction: ' || count(*))::int END AS saved
FROM saved`,
    release: sql`DELETE FROM ${table} WHERE ${scope} AND ${heldBy} RETURNING fence`,
    extend: sql`UPDATE ${table} SET
    lease_expires_at = ${msFromNow(sql`$6`)},
    expires_at = greatest(expires_at, ${msFromNow(sql`$6`)})
  WHERE ${scope} AND ${heldBy}
  RETURNING fence`,
    get: sql`SELECT ${recordColumns} FROM ${table} WHERE ${scope} AND expires_at > statement_timestamp()`,
    purge: sql`DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM ${table}
    WHERE expires_at <= statement_timestamp()
    ORDER BY expires_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED))`,
  };
}

/** The statements of `migrate()`. */
export const migrationStatements = {
  /** One migrator at a time: concurrent CREATE ... IF NOT EXISTS can still collide in the catalogs. */
  lock: sql`SELECT pg_advisory_xact_lock(hashtextextended('oncely.migrate', 0))`,
  /** $1 schema name. */
  schemaExists: sql`SELECT 1 FROM pg_namespace WHERE nspname = $1`,
  createSchema: (schema: QuotedIdentifier) => sql`CREATE SCHEMA IF NOT EXISTS ${schema}`,
  /** $1 quoted schema: the shipped files name their objects unqualified. */
  useSchema: sql`SELECT set_config('search_path', $1, true)`,
};
