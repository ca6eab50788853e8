-- oncely flows: the recovery points of multi-step operations (idempotency.flow), one row per flow and
-- one per phase, each a child of its idempotency record. Plain SQL, safe to run again; migrate()
-- renames every identifier that starts with oncely_idempotency when given another table name.

CREATE TABLE IF NOT EXISTS oncely_idempotency_flow (
  tenant            text        NOT NULL,
  principal         text        NOT NULL,
  operation         text        NOT NULL,
  idempotency_key   text        NOT NULL,
  -- the record's created_at when the flow opened: a record claimed afresh (expired) starts a new life
  record_created_at timestamptz NOT NULL,
  -- the request the flow runs on, JSON text exactly as recorded, so a completer can finish it
  request_json      text        NOT NULL,
  PRIMARY KEY (tenant, principal, operation, idempotency_key),
  FOREIGN KEY (tenant, principal, operation, idempotency_key)
    REFERENCES oncely_idempotency (tenant, principal, operation, idempotency_key) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS oncely_idempotency_flow_phase (
  tenant          text    NOT NULL,
  principal       text    NOT NULL,
  operation       text    NOT NULL,
  idempotency_key text    NOT NULL,
  -- recovery point n is reached by phase n (0-based); phases commit one after another
  position        integer NOT NULL CHECK (position >= 0),
  name            text    NOT NULL,
  kind            text    NOT NULL CHECK (kind IN ('atomic', 'remote')),
  -- the phase's result as JSON text; NULL when it returned undefined
  result_json     text,
  PRIMARY KEY (tenant, principal, operation, idempotency_key, position),
  FOREIGN KEY (tenant, principal, operation, idempotency_key)
    REFERENCES oncely_idempotency_flow (tenant, principal, operation, idempotency_key) ON DELETE CASCADE
);
