-- oncely operation journal: the caller's durable record of its logical operations, one row each.
-- The idempotency key is generated once, stored here before the first attempt, and reused by every
-- retry and every process that resumes the operation. Plain SQL, safe to run again; migrate() renames
-- every identifier that starts with oncely_journal when given another table name.

CREATE TABLE IF NOT EXISTS oncely_journal (
  operation_id     text        PRIMARY KEY,
  idempotency_key  text        NOT NULL,
  state            text        NOT NULL CHECK (state IN ('pending', 'unknown', 'succeeded', 'failed')),
  attempts         integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- JSON text exactly as recorded (text, not jsonb: jsonb refuses \u0000 and reorders keys)
  request_json     text,
  -- succeeded: the value; failed: the error
  outcome_json     text,
  -- unknown only: why the caller gave up
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT statement_timestamp(),
  updated_at       timestamptz NOT NULL DEFAULT statement_timestamp(),
  CHECK (state IN ('succeeded', 'failed') OR outcome_json IS NULL),
  CHECK (state = 'unknown' OR last_error IS NULL)
);

-- listUnresolved() reads open entries, oldest change first.
CREATE INDEX IF NOT EXISTS oncely_journal_open_idx ON oncely_journal (updated_at) WHERE state IN ('pending', 'unknown');
-- purgeSettled() deletes settled entries in bounded batches, oldest first.
CREATE INDEX IF NOT EXISTS oncely_journal_settled_idx ON oncely_journal (updated_at) WHERE state IN ('succeeded', 'failed');
