-- oncely outbox claim, committed without waiting for its WAL flush. A claim only leases: if the server
-- crashes before the commit reaches disk, the lease is lost and the events are claimed, and published,
-- again, which at-least-once delivery and the consumers' inbox already handle; no event can be lost,
-- since enqueue commits with the server's setting. Safe to run again; renamed with the outbox table.

-- Leases up to claim_limit events to claim_owner for lease_ms: aggregate by aggregate, the oldest
-- waiting first (FOR UPDATE SKIP LOCKED, so relays split the aggregates), each one's unpublished
-- events in aggregate_seq order up to the first that is dead-lettered, not yet due or leased.
-- Each statement in a plpgsql function sees what committed before it (READ COMMITTED).
CREATE OR REPLACE FUNCTION oncely_outbox_claim(claim_owner text, claim_limit integer, lease_ms float8)
RETURNS SETOF oncely_outbox
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $claim$
DECLARE
  now_at timestamptz := statement_timestamp();
  lease_until timestamptz := statement_timestamp() + lease_ms * interval '1 millisecond';
  head record;
  pending record;
  taken text[] := '{}';
  mine text[];
  blocked_until timestamptz;
BEGIN
  -- Lasts to the end of the caller's transaction (a SET clause on the function would end with the call,
  -- before the commit it is meant for).
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR head IN
    SELECT a.aggregate_type, a.aggregate_id FROM oncely_outbox_aggregates a
    WHERE a.claimable_at <= now_at
    ORDER BY a.claimable_at
    LIMIT claim_limit
    FOR UPDATE SKIP LOCKED
  LOOP
    mine := '{}';
    blocked_until := NULL;
    FOR pending IN
      SELECT o.event_id, o.dead_lettered_at, o.next_attempt_at, o.lease_expires_at FROM oncely_outbox o
      WHERE o.aggregate_type = head.aggregate_type AND o.aggregate_id = head.aggregate_id AND o.published_at IS NULL
      ORDER BY o.aggregate_seq
      LIMIT claim_limit - cardinality(taken)
    LOOP
      IF pending.dead_lettered_at IS NOT NULL THEN blocked_until := 'infinity'; EXIT; END IF;
      IF pending.next_attempt_at > now_at THEN blocked_until := pending.next_attempt_at; EXIT; END IF;
      IF pending.lease_expires_at > now_at THEN blocked_until := pending.lease_expires_at; EXIT; END IF;
      mine := mine || pending.event_id;
    END LOOP;
    IF cardinality(mine) > 0 THEN
      UPDATE oncely_outbox_aggregates SET claimable_at = lease_until, lease_owner = claim_owner
      WHERE aggregate_type = head.aggregate_type AND aggregate_id = head.aggregate_id;
      taken := taken || mine;
    ELSIF blocked_until IS NOT NULL THEN
      UPDATE oncely_outbox_aggregates SET claimable_at = blocked_until, lease_owner = NULL
      WHERE aggregate_type = head.aggregate_type AND aggregate_id = head.aggregate_id;
    ELSE
      -- Empty: forgotten unless an enqueue holds the sequence row (its event commits after this).
      PERFORM 1 FROM oncely_outbox_sequences s
      WHERE s.aggregate_type = head.aggregate_type AND s.aggregate_id = head.aggregate_id
      FOR SHARE SKIP LOCKED;
      IF FOUND AND NOT EXISTS (
        SELECT 1 FROM oncely_outbox o
        WHERE o.aggregate_type = head.aggregate_type AND o.aggregate_id = head.aggregate_id AND o.published_at IS NULL
      ) THEN
        DELETE FROM oncely_outbox_aggregates WHERE aggregate_type = head.aggregate_type AND aggregate_id = head.aggregate_id;
      END IF;
    END IF;
    EXIT WHEN cardinality(taken) >= claim_limit;
  END LOOP;
  RETURN QUERY
    UPDATE oncely_outbox o SET attempts = o.attempts + 1, lease_owner = claim_owner, lease_expires_at = lease_until
    WHERE o.event_id = ANY(taken) AND o.published_at IS NULL
    RETURNING o.*;
END
$claim$;
