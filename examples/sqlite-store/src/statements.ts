// #region clock
/**
 * Now, in epoch milliseconds, by SQLite's clock. SQLite reads `'now'` once per statement, so every
 * decision one statement takes about a lease or a retention sees the same instant.
 */
const NOW = `CAST(round(unixepoch('subsec') * 1000) AS INTEGER)`;

/** Every statement names the record by its scope in the same four parameters. */
const SCOPE = 'tenant = @tenant AND principal = @principal AND operation = @operation AND idempotency_key = @key';

/** Free to claim: expired, or in progress under a lapsed lease with the same fingerprint. */
const CLAIMABLE = `expires_ms <= ${NOW}
  OR (state = 'in_progress' AND lease_expires_ms <= ${NOW} AND fingerprint = excluded.fingerprint)`;

/** Held by @token: in progress, the lease running, the record live. */
const HELD_BY = `state = 'in_progress' AND lease_token = @token
  AND lease_expires_ms > ${NOW} AND expires_ms > ${NOW}`;

/** A record as `toRecord` reads it. */
const COLUMNS = `fingerprint, state, fence, response,
  lease_expires_ms - ${NOW} AS lease_remaining_ms, created_ms, expires_ms`;
// #endregion clock

/** The statements of one store, on its table (a name `checkOptions` accepted). */
export const storeStatements = (table: string) => ({
  // #region claim
  /**
   * Inserts a fresh record, or takes over a claimable one: fence + 1 and createdAt kept, or fence 1
   * and a new createdAt when it had expired. Returns the fence when it claimed, and no row when the
   * record stands as it is.
   */
  claim: `INSERT INTO ${table} (tenant, principal, operation, idempotency_key, fingerprint, state,
    lease_token, lease_expires_ms, fence, created_ms, expires_ms)
  VALUES (@tenant, @principal, @operation, @key, @fingerprint, 'in_progress',
    @token, ${NOW} + @leaseMs, 1, ${NOW}, ${NOW} + @retentionMs)
  ON CONFLICT (tenant, principal, operation, idempotency_key) DO UPDATE SET
    fence = CASE WHEN expires_ms <= ${NOW} THEN 1 ELSE fence + 1 END,
    created_ms = CASE WHEN expires_ms <= ${NOW} THEN excluded.created_ms ELSE created_ms END,
    fingerprint = excluded.fingerprint, state = 'in_progress', response = NULL,
    lease_token = excluded.lease_token, lease_expires_ms = excluded.lease_expires_ms,
    expires_ms = excluded.expires_ms
  WHERE ${CLAIMABLE}
  RETURNING fence`,
  /** The record a claim did not take, as it stands: the claim just found it live. */
  read: `SELECT ${COLUMNS} FROM ${table} WHERE ${SCOPE}`,
  // #endregion claim
  // #region cas
  complete: `UPDATE ${table}
  SET state = @state, lease_token = NULL, lease_expires_ms = NULL, response = @response,
    expires_ms = ${NOW} + @retentionMs
  WHERE ${SCOPE} AND ${HELD_BY}`,
  release: `DELETE FROM ${table} WHERE ${SCOPE} AND ${HELD_BY}`,
  extend: `UPDATE ${table}
  SET lease_expires_ms = ${NOW} + @leaseMs, expires_ms = max(expires_ms, ${NOW} + @leaseMs)
  WHERE ${SCOPE} AND ${HELD_BY}`,
  // #endregion cas
  // #region get
  get: `SELECT ${COLUMNS} FROM ${table} WHERE ${SCOPE} AND expires_ms > ${NOW}`,
  purge: `DELETE FROM ${table} WHERE rowid IN (
    SELECT rowid FROM ${table} WHERE expires_ms <= ${NOW} ORDER BY expires_ms LIMIT @limit)`,
  // #endregion get
});
