import type { QuotedIdentifier } from '../identifiers/identifier.js';

/** Every statement names the flow by its scope in $1-$4. */
const scope = `tenant = $1 AND principal = $2 AND operation = $3 AND idempotency_key = $4`;

/** The SQL of a store's flows, over its record, flow and phase tables. */
export interface FlowStatements {
  /** $5 token: locks the record the token holds (lease running); no row when it is not held. */
  readonly lockHeld: string;
  /** Drops a flow of an earlier life of the record (another created_at). */
  readonly dropStale: string;
  /** $5 request JSON. */
  readonly open: string;
  readonly request: string;
  readonly phases: string;
  /** Whether the flow belongs to the record's current life, and how many phases it holds. */
  readonly position: string;
  /** $5 position, $6 name, $7 kind, $8 result JSON. */
  readonly insertPhase: string;
  /** $5 lease ms: the recovery point renews the lease and keeps retention beyond it. */
  readonly renew: string;
  /** $1 limit. */
  readonly abandoned: string;
}

/** Builds the flow statements; the tables are validated, quoted `"schema"."table"` names. */
export function flowStatements(records: QuotedIdentifier, flows: QuotedIdentifier, phases: QuotedIdentifier): FlowStatements {
  return {
    lockHeld: `SELECT 1 FROM ${records}
      WHERE ${scope} AND state = 'in_progress' AND lease_token = $5
        AND lease_expires_at > statement_timestamp() AND expires_at > statement_timestamp()
      FOR UPDATE`,
    dropStale: `DELETE FROM ${flows} WHERE ${scope} AND record_created_at <> (SELECT created_at FROM ${records} WHERE ${scope})`,
    open: `INSERT INTO ${flows} (tenant, principal, operation, idempotency_key, record_created_at, request_json)
      SELECT tenant, principal, operation, idempotency_key, created_at, $5 FROM ${records} WHERE ${scope}
      ON CONFLICT DO NOTHING`,
    request: `SELECT request_json FROM ${flows} WHERE ${scope}`,
    phases: `SELECT position, name, kind, result_json FROM ${phases} WHERE ${scope} ORDER BY position`,
    position: `SELECT f.record_created_at = r.created_at AS current, (SELECT count(*)::int FROM ${phases} WHERE ${scope}) AS phases
      FROM ${flows} AS f JOIN ${records} AS r USING (tenant, principal, operation, idempotency_key) WHERE ${scope}`,
    insertPhase: `INSERT INTO ${phases} (tenant, principal, operation, idempotency_key, position, name, kind, result_json)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    renew: `UPDATE ${records} SET
        lease_expires_at = statement_timestamp() + $5::float8 * interval '1 millisecond',
        expires_at = greatest(expires_at, statement_timestamp() + $5::float8 * interval '1 millisecond')
      WHERE ${scope}`,
    abandoned: `SELECT r.tenant, r.principal, r.operation, r.idempotency_key, r.fingerprint
      FROM ${flows} AS f JOIN ${records} AS r USING (tenant, principal, operation, idempotency_key)
      WHERE r.state = 'in_progress' AND r.lease_expires_at <= statement_timestamp()
        AND r.expires_at > statement_timestamp() AND f.record_created_at = r.created_at
      ORDER BY r.lease_expires_at LIMIT $1`,
  };
}
