/**
 * One row per scope. The four scope columns are the primary key, so no two scopes share a record
 * whatever characters they hold; times are epoch milliseconds by SQLite's clock. STRICT makes SQLite
 * refuse a value of the wrong type instead of storing it.
 */
export const createTable = (table: string): string => `
CREATE TABLE IF NOT EXISTS ${table} (
  tenant           TEXT    NOT NULL,
  principal        TEXT    NOT NULL,
  operation        TEXT    NOT NULL,
  idempotency_key  TEXT    NOT NULL,
  fingerprint      TEXT    NOT NULL,
  state            TEXT    NOT NULL,
  lease_token      TEXT,
  lease_expires_ms INTEGER,
  fence            INTEGER NOT NULL,
  response         TEXT,
  created_ms       INTEGER NOT NULL,
  expires_ms       INTEGER NOT NULL,
  PRIMARY KEY (tenant, principal, operation, idempotency_key)
) STRICT;
CREATE INDEX IF NOT EXISTS ${table}_expires ON ${table} (expires_ms);`;
