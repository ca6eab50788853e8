import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, postgresInbox, postgresOutbox, sqlDriver } from '../../src/index.js';
import { type PrivatePostgres, startPrivatePostgres } from '../support/private-postgres.js';
import { until } from '../support/wait.js';

let server: PrivatePostgres;
let pool: pg.Pool;
const schema = 'public';

beforeAll(async () => {
  server = await startPrivatePostgres();
  pool = new pg.Pool({ connectionString: server.url, max: 5, connectionTimeoutMillis: 2_000 });
  // Idle connections die with the server; the pool replaces them.
  pool.on('error', () => undefined);
  await migrate(pool, { schema });
  await pool.query('CREATE TABLE applied (event_id text PRIMARY KEY)');
  // The WAL writer writes an asynchronous commit within 3 × this delay: 10 s keeps the last one in memory
  // when the server crashes a moment later.
  await pool.query(`ALTER SYSTEM SET wal_writer_delay = '10s'`);
  await pool.query('SELECT pg_reload_conf()');
});
afterAll(async () => {
  await pool?.end();
  await server?.dispose();
});

describe('PostgreSQL crashes right after the relay’s asynchronous bookkeeping (a private cluster)', () => {
  it('the lost mark costs a redelivery the inbox skips; every enqueued event and every inbox row survives', async () => {
    const outbox = postgresOutbox({ db: pool, schema, channel: false });
    const inbox = postgresInbox({ db: pool, schema });
    const consume = (eventId: string) =>
      inbox.run({ consumer: 'billing', eventId }, (tx) => tx.query('INSERT INTO applied (event_id) VALUES ($1)', [eventId]));
    for (const account of ['a', 'b', 'c']) {
      await sqlDriver(pool).transaction(async (tx) => ({
        action: 'commit',
        value: await outbox.enqueue(tx, { aggregateType: 'account', aggregateId: account, eventType: 'account.credited.v1', payload: {} }),
      }));
    }
    const claimed = await outbox.source.claim({ owner: 'r1', limit: 10, leaseMs: 500 });
    expect(claimed).toHaveLength(3);
    for (const event of claimed) expect(await consume(event.eventId)).toBe('processed');
    // The inbox commits wait for their WAL flush, which carries the claim's; the mark is the last commit.
    await outbox.source.markPublished(claimed.map((event) => event.eventId));
    expect(Number((await pool.query('SELECT count(*) AS n FROM oncely_outbox WHERE published_at IS NULL')).rows[0].n)).toBe(0);
    await server.stop('immediate');
    await server.start();
    await until('the pool reaches the restarted server', () => pool.query('SELECT 1').then(() => true, () => false));

    const { rows } = await pool.query<{ events: number; unpublished: number; applied: number; inbox: number }>(
      `SELECT (SELECT count(*)::int FROM oncely_outbox) AS events,
              (SELECT count(*)::int FROM oncely_outbox WHERE published_at IS NULL) AS unpublished,
              (SELECT count(*)::int FROM applied) AS applied,
              (SELECT count(*)::int FROM oncely_inbox) AS inbox`,
    );
    // The mark was asynchronous, so the crash took it: the events are unpublished again, and nothing else is lost.
    expect(rows[0]).toEqual({ events: 3, unpublished: 3, applied: 3, inbox: 3 });
    const again: string[] = [];
    await until('the lapsed leases let the events be claimed again', async () => {
      const batch = await outbox.source.claim({ owner: 'r2', limit: 10, leaseMs: 60_000 });
      for (const event of batch) {
        expect(await consume(event.eventId)).toBe('duplicate');
        again.push(event.eventId);
      }
      if (batch.length > 0) await outbox.source.markPublished(batch.map((event) => event.eventId));
      return again.length === 3;
    });
    expect(again.sort()).toEqual(claimed.map((event) => event.eventId).sort());
    expect(Number((await pool.query('SELECT count(*) AS n FROM applied')).rows[0].n)).toBe(3);
  });
});
