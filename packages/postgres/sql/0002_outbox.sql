-- oncely transactional outbox: events written in the business transaction, published later by relays.
-- Plain SQL, safe to run again; migrate() renames every identifier that starts with oncely_outbox when
-- given another table name (the sequence table follows as <name>_sequences).

CREATE TABLE IF NOT EXISTS oncely_outbox (
  -- the consumers' deduplication identity
  event_id         text        PRIMARY KEY,
  -- insertion order: relays claim the oldest first (timestamps can tie, a sequence cannot)
  position         bigint      GENERATED ALWAYS AS IDENTITY,
  aggregate_type   text        NOT NULL,
  aggregate_id     text        NOT NULL,
  -- position in the aggregate: events of one aggregate are published in this order
  aggregate_seq    bigint      NOT NULL CHECK (aggregate_seq >= 1),
  event_type       text        NOT NULL,
  payload          jsonb       NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT statement_timestamp(),
  -- set once the broker acknowledged the event; published rows are purged after a retention period
  published_at     timestamptz,
  -- claims so far, including claims whose relay died before reporting back
  attempts         integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- not claimable before this instant (backoff after a failed publish)
  next_attempt_at  timestamptz NOT NULL DEFAULT statement_timestamp(),
  -- the relay holding the event and when its lease lapses (database clock)
  lease_owner      text,
  lease_expires_at timestamptz,
  -- parked after too many attempts: holds back the later events of its aggregate until requeued
  dead_lettered_at timestamptz,
  last_error       text,
  CONSTRAINT oncely_outbox_aggregate_seq_key UNIQUE (aggregate_type, aggregate_id, aggregate_seq),
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
);

-- The last sequence handed out per aggregate. enqueue() bumps it in the business transaction, and
-- the row lock it takes orders concurrent enqueues of one aggregate: a higher sequence can never
-- commit before a lower one. Rows stay when published events are purged, so numbering never restarts.
CREATE TABLE IF NOT EXISTS oncely_outbox_sequences (
  aggregate_type text   NOT NULL,
  aggregate_id   text   NOT NULL,
  last_seq       bigint NOT NULL CHECK (last_seq >= 1),
  PRIMARY KEY (aggregate_type, aggregate_id)
);

-- The claim walks unpublished events oldest first...
CREATE INDEX IF NOT EXISTS oncely_outbox_unpublished_idx ON oncely_outbox (position) WHERE published_at IS NULL;
-- ...and checks that no earlier event of the same aggregate is still unpublished.
CREATE INDEX IF NOT EXISTS oncely_outbox_pending_seq_idx
  ON oncely_outbox (aggregate_type, aggregate_id, aggregate_seq) WHERE published_at IS NULL;
-- purgePublished() deletes in bounded batches, oldest publication first.
CREATE INDEX IF NOT EXISTS oncely_outbox_published_idx ON oncely_outbox (published_at) WHERE published_at IS NOT NULL;
