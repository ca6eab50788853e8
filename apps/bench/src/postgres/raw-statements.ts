import { RAW_TABLE, SCHEMA } from './schema.js';

const table = `${SCHEMA}.${RAW_TABLE}`;
const scope = 'tenant = $1 AND principal = $2 AND operation = $3 AND idempotency_key = $4';

/**
 * The fewest statements a lease-mode first request and replay can take on this schema: an insert
 * that claims or does nothing, an update that records the outcome under the token, one select.
 */
export const rawStatements = {
  /** $1-$4 scope, $5 fingerprint, $6 token. */
  claim: `INSERT INTO ${table} (tenant, principal, operation, idempotency_key, fingerprint, state,
      lease_token, lease_expires_at, fence, expires_at)
    VALUES ($1, $2, $3, $4, $5, 'in_progress', $6,
      statement_timestamp() + interval '30 seconds', 1, statement_timestamp() + interval '1 day')
    ON CONFLICT (tenant, principal, operation, idempotency_key) DO NOTHING
    RETURNING fence`,
  /** $5 token, $6 status, $7 body. */
  complete: `UPDATE ${table} SET state = 'succeeded', lease_token = NULL, lease_expires_at = NULL,
      response_status = $6, response_body = $7::text::jsonb
    WHERE ${scope} AND lease_token = $5
    RETURNING fence`,
  replay: `SELECT state, response_status, response_body::text AS response_body FROM ${table}
    WHERE ${scope} AND expires_at > statement_timestamp()`,
} as const;
