import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresOutbox, postgresOutbox, sqlDriver } from '../../src/index.js';
import { createPool, dropSchema, uniqueSchema } from '../support/database.js';
import { blockedOnLock, gate } from '../support/wait.js';
import { enqueueCommitted, freshOutboxTable } from './outbox-support.js';

const pool = createPool({ max: 30 });
const RELAY_APP = `oncely-aggregate-rows-relay-${Math.random().toString(36).slice(2, 8)}`;
const relayPool = createPool({ max: 2, application_name: RELAY_APP });
const schema = uniqueSchema('aggregate_rows');
const credit = (aggregateId: string) => ({ aggregateType: 'account', aggregateId, eventType: 'account.credited.v1', payload: { amount: 1 } });

async function freshOutbox(): Promise<{ outbox: PostgresOutbox; table: string; aggregates: string }> {
  const table = await freshOutboxTable(pool, schema);
  return { outbox: postgresOutbox({ db: pool, schema, table, channel: false }), table, aggregates: `"${schema}"."${table}_aggregates"` };
}

const count = async (query: string) => Number((await pool.query<{ n: number }>(query)).rows[0]?.n);

/** One relay round: claim, then mark everything claimed published; answers how many it claimed. */
async function round(outbox: PostgresOutbox, owner: string): Promise<number> {
  const events = await outbox.source.claim({ owner, limit: 50, leaseMs: 60_000 });
  if (events.length > 0) await outbox.source.markPublished(events.map((event) => event.eventId));
  return events.length;
}

beforeAll(async () => {
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
});

afterAll(async () => {
  await relayPool.end();
  await dropSchema(pool, schema);
  await pool.end();
});

describe('the claim moves the aggregate rows it visited in one write', () => {
  it('the aggregates it took from are leased to the claimer; one whose head is not due waits for its retry time', async () => {
    const { outbox, aggregates } = await freshOutbox();
    for (const account of ['a', 'b', 'c']) await enqueueCommitted(pool, outbox, credit(account));
    const [retried] = await outbox.source.claim({ owner: 'r0', limit: 1, leaseMs: 60_000 });
    await outbox.source.reschedule({ owner: 'r0', retries: [{ eventId: retried!.eventId, delayMs: 3_600_000, error: 'broker down' }] });
    expect(await outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: 60_000 })).toHaveLength(2);
    const { rows } = await pool.query<{ id: string; owner: string | null; wait_s: number }>(
      `SELECT aggregate_id AS id, lease_owner AS owner, round(extract(epoch FROM claimable_at - statement_timestamp()))::int AS wait_s
       FROM ${aggregates} ORDER BY aggregate_id`,
    );
    const held = rows.find((row) => row.id === retried!.aggregateId);
    expect(held).toMatchObject({ owner: null });
    expect(held!.wait_s).toBeGreaterThan(3_500);
    const leased = rows.filter((row) => row !== held);
    expect(leased).toHaveLength(2);
    for (const row of leased) {
      expect(row.owner).toBe('r1');
      expect(row.wait_s).toBeGreaterThan(50);
    }
  });
});

describe('the mark that publishes an aggregate’s last event deletes its row, never one an enqueue still writes to', () => {
  it('marking every event published leaves no aggregate row for a claim to visit', async () => {
    const { outbox, aggregates } = await freshOutbox();
    for (const account of ['a', 'b', 'a', 'c']) await enqueueCommitted(pool, outbox, credit(account));
    expect(await round(outbox, 'r1')).toBe(4);
    expect(await count(`SELECT count(*)::int AS n FROM ${aggregates}`)).toBe(0);
  });

  it('an aggregate with an event still waiting keeps its row, woken for the next claim', async () => {
    const { outbox, aggregates } = await freshOutbox();
    await enqueueCommitted(pool, outbox, credit('a'));
    await enqueueCommitted(pool, outbox, credit('a'));
    const [first] = await outbox.source.claim({ owner: 'r1', limit: 1, leaseMs: 60_000 });
    await outbox.source.markPublished([first!.eventId]);
    expect(await count(`SELECT count(*)::int AS n FROM ${aggregates} WHERE claimable_at <= statement_timestamp()`)).toBe(1);
    expect((await outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: 60_000 })).map((event) => event.aggregateSeq)).toEqual([2]);
  });

  it('an enqueue holding the sequence row while the mark empties the aggregate: its event is claimed once it commits', async () => {
    const { outbox } = await freshOutbox();
    await enqueueCommitted(pool, outbox, credit('a'));
    const [published] = await outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: 60_000 });
    const enqueued = gate();
    const commit = gate();
    const writer = sqlDriver(pool).transaction(async (tx) => {
      const event = await outbox.enqueue(tx, credit('a'));
      enqueued.open();
      await commit.opened;
      return { action: 'commit', value: event };
    });
    await enqueued.opened;
    await outbox.source.markPublished([published!.eventId]);
    commit.open();
    const late = await writer;
    expect((await outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: 60_000 })).map((event) => event.eventId)).toEqual([late.eventId]);
  });

  it('an enqueue that commits after the mark’s snapshot, before it locks the sequence row: the row stays and the event is claimed', async () => {
    const { outbox, table } = await freshOutbox();
    const relay = postgresOutbox({ db: relayPool, schema, table, channel: false }).source;
    await enqueueCommitted(pool, outbox, credit('a'));
    const [published] = await relay.claim({ owner: 'r1', limit: 10, leaseMs: 60_000 });
    // A row lock on the event holds the mark after its snapshot was taken; the enqueue commits meanwhile.
    const blocker = await pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM ${outbox.table} WHERE event_id = $1 FOR UPDATE`, [published!.eventId]);
      const mark = relay.markPublished([published!.eventId]);
      await blockedOnLock(pool, RELAY_APP);
      const late = await enqueueCommitted(pool, outbox, credit('a'));
      await blocker.query('COMMIT');
      await mark;
      expect((await relay.claim({ owner: 'r1', limit: 10, leaseMs: 60_000 })).map((event) => event.eventId)).toEqual([late.eventId]);
    } finally {
      blocker.release();
    }
  });

  it('producers racing two relays over 8 aggregates: no event is ever left without its aggregate row, and all go out', async () => {
    const { outbox, aggregates } = await freshOutbox();
    const stranded = `SELECT count(*)::int AS n FROM ${outbox.table} o WHERE o.published_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM ${aggregates} a WHERE a.aggregate_type = o.aggregate_type AND a.aggregate_id = o.aggregate_id)`;
    let producing = true;
    const relays = ['r1', 'r2'].map(async (owner) => {
      while (producing) await round(outbox, owner);
    });
    // Each producer's transaction stays open a moment after its enqueue, so marks meet it in flight.
    await Promise.all(
      Array.from({ length: 12 }, async (_, producer) => {
        for (let i = 0; i < 25; i++) {
          await sqlDriver(pool).transaction(async (tx) => {
            await outbox.enqueue(tx, credit(`acct-${(producer + i) % 8}`));
            await tx.query('SELECT pg_sleep(0.002)');
            return { action: 'commit', value: undefined };
          });
        }
      }),
    );
    producing = false;
    await Promise.all(relays);
    expect(await count(stranded)).toBe(0);
    while ((await round(outbox, 'r1')) > 0);
    expect(await count(`SELECT count(*)::int AS n FROM ${outbox.table} WHERE published_at IS NULL`)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM ${outbox.table}`)).toBe(300);
  });
});
