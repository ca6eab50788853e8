-- oncely outbox headers: message headers publishers carry beside the payload (the W3C trace context
-- captured at enqueue, and the caller's own). NULL when an event has none. Safe to run again.

ALTER TABLE oncely_outbox ADD COLUMN IF NOT EXISTS headers jsonb;
