import { createRelay, type Publisher } from '@oncely/core/outbox';
import { postgresOutbox } from '@oncely/postgres';
import type pg from 'pg';
import type { RunMeasurement } from '../harness/closed-loop.js';
import { median } from '../harness/stats.js';

/** A backlog: `events` unpublished events spread round-robin over `aggregates` aggregates. */
export interface BacklogShape {
  readonly events: number;
  readonly aggregates: number;
}

/** Acknowledges every event at once: the relay, not the broker, is what is measured. */
export const instantPublisher: Publisher = {
  name: 'instant',
  publish: async (events) => events.map(() => ({ kind: 'published' as const })),
};

/**
 * Empties the outbox and writes the backlog in one statement per table, as `enqueue` would have left
 * it (sequences per aggregate, and the aggregate rows when the schema has them), then analyses it.
 */
export async function fillBacklog(pool: pg.Pool, schema: string, shape: BacklogShape): Promise<void> {
  const { events, aggregates } = shape;
  const { rows } = await pool.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE 'oncely_outbox%'`,
    [schema],
  );
  const tables = rows.map((r) => `${schema}.${r.name}`);
  await pool.query(`TRUNCATE ${tables.join(', ')}`);
  await pool.query(
    `INSERT INTO ${schema}.oncely_outbox (event_id, aggregate_type, aggregate_id, aggregate_seq, event_type, payload)
     SELECT 'evt_' || g, 'order', 'ord_' || (g % $2), g / $2 + 1, 'order.updated.v1', jsonb_build_object('n', g)
     FROM generate_series(0, $1::int - 1) AS g ORDER BY g`,
    [events, aggregates],
  );
  await pool.query(
    `INSERT INTO ${schema}.oncely_outbox_sequences (aggregate_type, aggregate_id, last_seq)
     SELECT aggregate_type, aggregate_id, max(aggregate_seq) FROM ${schema}.oncely_outbox GROUP BY 1, 2`,
  );
  if (rows.some((r) => r.name === 'oncely_outbox_aggregates')) {
    await pool.query(
      `INSERT INTO ${schema}.oncely_outbox_aggregates (aggregate_type, aggregate_id)
       SELECT aggregate_type, aggregate_id FROM ${schema}.oncely_outbox_sequences`,
    );
  }
  await pool.query(`VACUUM ANALYZE ${tables.join(', ')}`);
}

/** Ends a drain when every event is out or `capMs` passed; the rate counts what went out. */
function drainMeasurement(published: number, elapsedMs: number): RunMeasurement {
  return {
    ops: published,
    elapsedMs,
    opsPerSec: (published * 1_000) / elapsedMs,
    latency: { p50: Number.NaN, p99: Number.NaN, count: 0 },
  };
}

/**
 * Commits the statement's transaction without waiting for its WAL flush, as the relay's claim and mark
 * do: without it the baseline waits on the disk twice a batch and the ratio measures the flush.
 */
const RELAXED_COMMIT = `set_config('synchronous_commit', 'off', true) AS relaxed`;

/**
 * The baseline: `workers` loops of a bare `FOR UPDATE SKIP LOCKED` batch of 100 in position order,
 * leased then marked published, the same two statements per batch a relay sends, committed the same
 * way (without waiting for the WAL flush), with no per-aggregate order.
 */
export async function bareDrain(pool: pg.Pool, schema: string, events: number, workers: number, capMs: number): Promise<RunMeasurement> {
  const table = `${schema}.oncely_outbox`;
  const claim = `WITH c AS (
      SELECT event_id FROM ${table} WHERE published_at IS NULL
        AND (lease_expires_at IS NULL OR lease_expires_at <= statement_timestamp())
      ORDER BY position LIMIT 100 FOR UPDATE SKIP LOCKED)
    UPDATE ${table} o SET attempts = o.attempts + 1, lease_owner = $1,
      lease_expires_at = statement_timestamp() + interval '30 seconds'
    FROM c WHERE o.event_id = c.event_id
    RETURNING o.event_id, o.aggregate_type, o.aggregate_id, o.aggregate_seq::float8, o.event_type, o.payload::text, o.created_at,
      ${RELAXED_COMMIT}`;
  const mark = `WITH m AS (
      UPDATE ${table} SET published_at = statement_timestamp(), lease_owner = NULL, lease_expires_at = NULL
      WHERE event_id = ANY($1::text[]) AND published_at IS NULL RETURNING 1)
    SELECT count(*) AS changed, ${RELAXED_COMMIT} FROM m`;
  let published = 0;
  const started = performance.now();
  const deadline = started + capMs;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (published < events && performance.now() < deadline) {
        const { rows } = await pool.query<{ event_id: string; payload: string }>(claim, [`bare-${worker}`]);
        if (rows.length === 0) break;
        for (const row of rows) JSON.parse(row.payload);
        await pool.query(mark, [rows.map((r) => r.event_id)]);
        published += rows.length;
      }
    }),
  );
  return drainMeasurement(published, performance.now() - started);
}

/**
 * `relays` oncely relays with an instant publisher, until the backlog is out or `capMs` passed. They run
 * as shipped: LISTEN/NOTIFY on and the default poll interval, so a relay with nothing to claim (every
 * aggregate held by another) waits for a wake-up instead of polling the database every few ms.
 */
export async function relayDrain(pool: pg.Pool, schema: string, events: number, relays: number, capMs: number): Promise<RunMeasurement> {
  const outbox = postgresOutbox({ db: pool, schema });
  let published = 0;
  let failures = 0;
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const started = performance.now();
  const list = Array.from({ length: relays }, (_, i) =>
    createRelay({
      source: outbox.source,
      publisher: instantPublisher,
      id: `drain-relay-${i}`,
      purge: false,
      statsIntervalMs: 0,
      onEvent: (event) => {
        if (event.type === 'outbox_published' && ++published >= events) finish();
        if (event.type === 'relay_error' || event.type === 'outbox_dead_lettered') failures++;
      },
    }),
  );
  for (const relay of list) relay.start();
  const timer = setTimeout(finish, capMs);
  await done;
  const elapsedMs = performance.now() - started;
  clearTimeout(timer);
  await Promise.all(list.map((relay) => relay.stop()));
  if (failures > 0) throw new Error(`bench: ${failures} relay errors or dead letters while draining`);
  return drainMeasurement(published, elapsedMs);
}

/** Median time of one claim of 100 (each batch then marked published, untimed), over `claims` claims. */
export async function claimTime(pool: pg.Pool, schema: string, claims: number): Promise<number> {
  const outbox = postgresOutbox({ db: pool, schema, channel: false });
  const times: number[] = [];
  for (let i = 0; i < claims; i++) {
    const started = performance.now();
    const batch = await outbox.source.claim({ owner: 'claim-timer', limit: 100, leaseMs: 30_000 });
    times.push(performance.now() - started);
    if (batch.length === 0) throw new Error('bench: the backlog ran out while timing claims');
    await outbox.source.markPublished(batch.map((event) => event.eventId));
  }
  return median(times);
}
