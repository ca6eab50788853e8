-- oncely inbox (processed messages): one row per (consumer, event) applied, written first in the
-- consumer's own transaction. A redelivered event finds its row and is skipped as a duplicate.
-- Plain SQL, safe to run again; migrate() renames every identifier that starts with oncely_inbox
-- when given another table name.

CREATE TABLE IF NOT EXISTS oncely_inbox (
  consumer     text        NOT NULL,
  event_id     text        NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT statement_timestamp(),
  PRIMARY KEY (consumer, event_id)
);

-- purgeProcessed() deletes rows older than the redelivery window in bounded batches.
CREATE INDEX IF NOT EXISTS oncely_inbox_processed_at_idx ON oncely_inbox (processed_at);
