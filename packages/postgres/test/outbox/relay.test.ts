import { createRelay, type Publisher, type RelayEvent } from '@oncely/core/outbox';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyWithInbox, memoryBroker } from '@oncely/testkit';
import { type PostgresOutbox, postgresOutbox, sqlDriver } from '../../src/index.js';
import { openWakeUp } from '../../src/outbox/wake-up.js';
import { createPool, DATABASE_URL, dropSchema, uniqueSchema } from '../support/database.js';
import { until } from '../support/wait.js';
import { enqueueCommitted, expectWokenByNotify, freshOutboxTable } from './outbox-support.js';

const APP = `oncely-relay-test-${Math.random().toString(36).slice(2, 8)}`;
const pool = createPool({ max: 20, application_name: APP });
const schema = uniqueSchema('relay');
const credit = (aggregateId: string) => ({ aggregateType: 'account', aggregateId, eventType: 'account.credited.v1', payload: { amount: 1 } });

async function freshOutbox(): Promise<PostgresOutbox> {
  const table = await freshOutboxTable(pool, schema);
  return postgresOutbox({ db: pool, schema, table });
}

beforeAll(async () => {
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
});

afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

describe('relay over the Postgres outbox', () => {
  it('an idle relay is woken by the NOTIFY of a commit, long before its poll interval', () => expectWokenByNotify(pool, schema));

  it('on a single pg.Client, the relay listens on that connection and is woken too', async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      await expectWokenByNotify(client, schema);
    } finally {
      await client.end();
    }
  });

  it('when the LISTEN connection is terminated, the wake-up polls, then listens again', async () => {
    const channel = `wake_${Math.random().toString(36).slice(2, 8)}`;
    const wakeUp = await openWakeUp(pool, sqlDriver(pool), channel, 50);
    const never = new AbortController().signal;
    try {
      const { rows } = await pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND query = $2`,
        [APP, `LISTEN "${channel}"`],
      );
      expect(rows).toHaveLength(1);
      // The lost connection is noticed, and the next wait listens again and wakes at once.
      await new Promise((resolve) => setTimeout(resolve, 100));
      await wakeUp.wait(600_000, never);
      const woken = wakeUp.wait(600_000, never);
      await until('the new LISTEN is in place', async () => {
        const { rows: listening } = await pool.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query = $2', [
          APP,
          `LISTEN "${channel}"`,
        ]);
        return listening.length === 1;
      });
      await pool.query('SELECT pg_notify($1, $2)', [channel, '']);
      await woken;
    } finally {
      await wakeUp.close();
    }
  });

  it('three relays with a flaky broker publish every event, each aggregate in sequence order', async () => {
    const outbox = await freshOutbox();
    const broker = memoryBroker();
    const flaky = broker.publisher(() => (Math.random() < 0.2 ? 'fail' : 'ack'));
    const events: RelayEvent[] = [];
    const relays = [0, 1, 2].map(() =>
      createRelay({
        source: outbox.source,
        publisher: flaky,
        batchSize: 10,
        pollIntervalMs: 20,
        backoff: { baseMs: 5, capMs: 20 },
        maxAttempts: 1_000,
        statsIntervalMs: 0,
        purge: false,
        onEvent: (event) => events.push(event),
      }),
    );
    for (const relay of relays) relay.start();
    try {
      for (let round = 0; round < 20; round++) {
        await Promise.all(Array.from({ length: 40 }, (_, a) => enqueueCommitted(pool, outbox, credit(`acct-${a}`))));
      }
      await until('every event is published', async () => (await outbox.source.stats()).unpublished === 0, 30_000);
    } finally {
      await Promise.all(relays.map((relay) => relay.stop()));
    }
    const applied = applyWithInbox(broker.log);
    expect(applied.size).toBe(40);
    for (const sequence of applied.values()) expect(sequence).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(events.some((event) => event.type === 'outbox_publish_failed')).toBe(true);
  });

  it('stop() hands the events of a hung publish back, unattempted, to the next relay', async () => {
    const outbox = await freshOutbox();
    const event = await enqueueCommitted(pool, outbox, credit('acct-1'));
    let entered = false;
    const hung: Publisher = {
      name: 'hung',
      publish: () => {
        entered = true;
        return new Promise(() => undefined);
      },
    };
    const relay = createRelay({ source: outbox.source, publisher: hung, statsIntervalMs: 0, purge: false });
    relay.start();
    await until('the publish hangs', async () => entered);
    await relay.stop({ timeoutMs: 100 });
    const { rows } = await pool.query(`SELECT attempts, lease_owner FROM ${outbox.table} WHERE event_id = $1`, [event.eventId]);
    expect(rows[0]).toEqual({ attempts: 0, lease_owner: null });
    const broker = memoryBroker();
    expect((await createRelay({ source: outbox.source, publisher: broker.publisher() }).runOnce()).published).toBe(1);
  });

  it('a dead letter holds its aggregate back until requeued, then goes out first', async () => {
    const outbox = await freshOutbox();
    const poison = await enqueueCommitted(pool, outbox, credit('acct-1'));
    const next = await enqueueCommitted(pool, outbox, credit('acct-1'));
    const broker = memoryBroker();
    let healthy = false;
    const relay = createRelay({
      source: outbox.source,
      publisher: broker.publisher((e) => (healthy || e.eventId !== poison.eventId ? 'ack' : 'fail')),
      maxAttempts: 1,
    });
    expect((await relay.runOnce()).deadLettered).toBe(1);
    expect((await relay.runOnce()).claimed).toBe(0);
    expect((await outbox.source.stats()).deadLettered).toBe(1);
    healthy = true;
    expect(await outbox.requeue([poison.eventId, next.eventId])).toBe(1);
    await relay.runOnce();
    await relay.runOnce();
    expect(broker.log.map((e) => e.eventId)).toEqual([poison.eventId, next.eventId]);
  });
});
