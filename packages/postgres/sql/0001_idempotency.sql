-- oncely idempotency records: one row per (tenant, principal, operation, key).
-- Plain SQL, safe to run again: copy it into Flyway, Knex, Prisma or Drizzle migrations as it is.
-- migrate() runs it with search_path set to the target schema, and renames every identifier that
-- starts with oncely_idempotency when given another table name.

CREATE TABLE IF NOT EXISTS oncely_idempotency (
  tenant           text        NOT NULL,
  principal        text        NOT NULL,
  operation        text        NOT NULL,
  idempotency_key  text        NOT NULL,
  -- SHA-256 of the canonical request: a key stays bound to the request it first arrived with
  fingerprint      text        NOT NULL,
  state            text        NOT NULL CHECK (state IN ('in_progress', 'succeeded', 'failed_final')),
  -- in progress only: the owner's token and when its lease lapses (database clock)
  lease_token      text,
  lease_expires_at timestamptz,
  -- fencing counter: 1 for the first owner, +1 at every takeover of a lapsed lease
  fence            integer     NOT NULL DEFAULT 1 CHECK (fence >= 1),
  -- terminal only: the response to replay; json (not jsonb) keeps its text exactly: key order, U+0000
  response_status  smallint    CHECK (response_status BETWEEN 100 AND 599),
  response_headers json,
  response_body    json,
  body_omitted     boolean     NOT NULL DEFAULT false,
  resource_id      text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  -- retention: past this instant the record is absent for every reader, before any cleanup
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (tenant, principal, operation, idempotency_key),
  CHECK ((state = 'in_progress') = (lease_token IS NOT NULL AND lease_expires_at IS NOT NULL)),
  CHECK ((state = 'in_progress') = (response_status IS NULL))
);

-- purgeExpired() deletes in bounded batches in expiry order through this index.
CREATE INDEX IF NOT EXISTS oncely_idempotency_expires_at_idx ON oncely_idempotency (expires_at);
