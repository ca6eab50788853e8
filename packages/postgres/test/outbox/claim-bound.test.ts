import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresOutbox, postgresOutbox } from '../../src/index.js';
import { createPool, dropSchema, uniqueSchema } from '../support/database.js';
import { enqueueCommitted, freshOutboxTable } from './outbox-support.js';

const pool = createPool({ max: 4 });
const schema = uniqueSchema('claim_bound');
const credit = (aggregateId: string) => ({ aggregateType: 'account', aggregateId, eventType: 'account.credited.v1', payload: { amount: 1 } });

/** A fresh outbox and its objects' qualified names (`named('_sequences')`). */
async function freshOutbox(): Promise<{ outbox: PostgresOutbox; table: string; aggregates: string; named: (suffix: string) => string }> {
  const name = await freshOutboxTable(pool, schema);
  const named = (suffix: string) => `"${schema}"."${name}${suffix}"`;
  return { outbox: postgresOutbox({ db: pool, schema, table: name, channel: false }), table: named(''), aggregates: named('_aggregates'), named };
}

const boundOf = async (aggregates: string, aggregateId: string) =>
  (await pool.query<{ bound: number }>(`SELECT published_seq::int AS bound FROM ${aggregates} WHERE aggregate_id = $1`, [aggregateId])).rows[0]?.bound;

beforeAll(async () => {
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
});

afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

describe('each aggregate row keeps a sequence up to which everything is published, and the claim starts after it', () => {
  it('the claim moves the bound to just below the first unpublished event it met', async () => {
    const { outbox, aggregates } = await freshOutbox();
    for (let i = 0; i < 5; i++) await enqueueCommitted(pool, outbox, credit('a'));
    const first = await outbox.source.claim({ owner: 'r1', limit: 2, leaseMs: 60_000 });
    expect(await boundOf(aggregates, 'a')).toBe(0);
    await outbox.source.markPublished(first.map((event) => event.eventId));
    const second = await outbox.source.claim({ owner: 'r1', limit: 2, leaseMs: 60_000 });
    expect(second.map((event) => event.aggregateSeq)).toEqual([3, 4]);
    expect(await boundOf(aggregates, 'a')).toBe(2);
  });

  it('a later event acknowledged while an earlier one failed: the bound stays below the failed one, which is claimed again', async () => {
    const { outbox, aggregates } = await freshOutbox();
    for (let i = 0; i < 3; i++) await enqueueCommitted(pool, outbox, credit('a'));
    const claimed = await outbox.source.claim({ owner: 'r1', limit: 3, leaseMs: 60_000 });
    // A publisher may acknowledge 2 and 3 and fail 1: an acknowledged publish is a fact.
    await outbox.source.markPublished(claimed.slice(1).map((event) => event.eventId));
    await outbox.source.reschedule({ owner: 'r1', retries: [{ eventId: claimed[0]!.eventId, delayMs: 0, error: 'broker down' }] });
    const again = await outbox.source.claim({ owner: 'r1', limit: 3, leaseMs: 60_000 });
    expect(again.map((event) => event.aggregateSeq)).toEqual([1]);
    expect(await boundOf(aggregates, 'a')).toBe(0);
  });

  it('an enqueue that adds the row of an aggregate with nothing unpublished starts the bound just below its event', async () => {
    const { outbox, aggregates } = await freshOutbox();
    for (let i = 0; i < 3; i++) await enqueueCommitted(pool, outbox, credit('a'));
    const claimed = await outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: 60_000 });
    await outbox.source.markPublished(claimed.map((event) => event.eventId));
    expect(await boundOf(aggregates, 'a')).toBeUndefined();
    await enqueueCommitted(pool, outbox, credit('a'));
    expect(await boundOf(aggregates, 'a')).toBe(3);
    const next = await outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: 60_000 });
    expect(next.map((event) => event.aggregateSeq)).toEqual([4]);
  });

  it('an enqueue into an aggregate whose row exists keeps the row’s bound', async () => {
    const { outbox, aggregates } = await freshOutbox();
    for (let i = 0; i < 3; i++) await enqueueCommitted(pool, outbox, credit('a'));
    await outbox.source.claim({ owner: 'r1', limit: 1, leaseMs: 60_000 });
    await enqueueCommitted(pool, outbox, credit('a'));
    expect(await boundOf(aggregates, 'a')).toBe(0);
  });

  it('a row left behind when the outbox and its sequences were emptied without it: the new first event is claimed', async () => {
    const { outbox, table, aggregates, named } = await freshOutbox();
    for (let i = 0; i < 5; i++) await enqueueCommitted(pool, outbox, credit('a'));
    const first = await outbox.source.claim({ owner: 'r1', limit: 2, leaseMs: 60_000 });
    await outbox.source.markPublished(first.map((event) => event.eventId));
    await outbox.source.claim({ owner: 'r1', limit: 2, leaseMs: 60_000 });
    expect(await boundOf(aggregates, 'a')).toBe(2);
    await pool.query(`TRUNCATE ${table}, ${named('_sequences')}`);
    await enqueueCommitted(pool, outbox, credit('a'));
    expect(await boundOf(aggregates, 'a')).toBe(0);
    const again = await outbox.source.claim({ owner: 'r2', limit: 10, leaseMs: 60_000 });
    expect(again.map((event) => event.aggregateSeq)).toEqual([1]);
  });
});

describe('a claim reads only what it takes, however much its aggregates published before', () => {
  it('half-way through a backlog of 100,000 events over 10 aggregates, a claim of 100 fetches at most 300 rows of the outbox', async () => {
    const { outbox, table, aggregates, named } = await freshOutbox();
    const events = 100_000;
    // Written as enqueue leaves them, then analysed while all are unpublished, as after an outage.
    await pool.query(
      `INSERT INTO ${table} (event_id, aggregate_type, aggregate_id, aggregate_seq, event_type, payload)
       SELECT 'evt_' || g, 'account', 'acc_' || (g % 10), g / 10 + 1, 'account.credited.v1', '{}'::jsonb
       FROM generate_series(0, $1::int - 1) AS g ORDER BY g`,
      [events],
    );
    await pool.query(`INSERT INTO ${named('_sequences')} (aggregate_type, aggregate_id, last_seq)
      SELECT aggregate_type, aggregate_id, max(aggregate_seq) FROM ${table} GROUP BY 1, 2`);
    await pool.query(`INSERT INTO ${aggregates} (aggregate_type, aggregate_id) SELECT DISTINCT aggregate_type, aggregate_id FROM ${table}`);
    await pool.query(`VACUUM ANALYZE ${table}`);
    for (let i = 0; i < 500; i++) {
      const batch = await outbox.source.claim({ owner: 'r1', limit: 100, leaseMs: 60_000 });
      await outbox.source.markPublished(batch.map((event) => event.eventId));
    }
    // Read before and after the claim, in one transaction: the session's counts not yet flushed
    // (earlier transactions' included) of outbox rows fetched through indexes or by scanning.
    const client = await pool.connect();
    const rowsRead = async () =>
      (
        await client.query<{ n: number }>(
          `SELECT (coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0))::int AS n FROM pg_stat_xact_user_tables WHERE relid = $1::regclass`,
          [table],
        )
      ).rows[0]!.n;
    let fetched: number;
    try {
      await client.query('BEGIN');
      const before = await rowsRead();
      const claimed = await client.query(`SELECT event_id FROM ${named('_claim')}('r2', 100, 60000)`);
      expect(claimed.rowCount).toBe(100);
      fetched = (await rowsRead()) - before;
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    expect(fetched).toBeLessThanOrEqual(300);
  });
});
