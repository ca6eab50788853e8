import { PGlite } from '@electric-sql/pglite';
import { createIdempotency } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { runOutboxSourceConformance } from '@oncely/testkit';
import { type PostgresTx, postgresOutbox, postgresStore } from '../../src/index.js';
import { createPool, DATABASE_URL, dropSchema, uniqueSchema } from '../support/database.js';
import { createSql } from '../support/postgresjs.js';
import { expectWokenByNotify, freshOutboxTable, outboxUnderTest } from './outbox-support.js';

const pool = createPool();
const schema = uniqueSchema('outbox');

afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

runOutboxSourceConformance({ describe, it, expect }, {
  name: 'postgres outbox (pg.Pool)',
  createOutbox: () => outboxUnderTest(pool, schema),
});

describe('postgres outbox: a single pg.Client', () => {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  const connected = client.connect();
  afterAll(() => client.end());
  runOutboxSourceConformance({ describe, it, expect }, {
    name: 'postgres outbox (pg.Client)',
    createOutbox: async () => {
      await connected;
      return outboxUnderTest(client, schema);
    },
    raceSize: 4,
  });
});

describe('postgres outbox: postgres.js', () => {
  const sql = createSql({ max: 8 });
  afterAll(() => sql.end());
  runOutboxSourceConformance({ describe, it, expect }, {
    name: 'postgres outbox (postgres.js)',
    createOutbox: () => outboxUnderTest(sql, schema),
  });

  it("a runInTransaction handler enqueues on its tx, postgres.js's own sql, in the same transaction", async () => {
    const table = await freshOutboxTable(sql, schema);
    const outbox = postgresOutbox({ db: sql, schema, table });
    const engine = createIdempotency({ store: postgresStore({ db: sql, schema }) });
    const request = { tenant: 'acme', operation: 'orders.create.v1', key: uniqueKey('k'), request: {} };
    let fail = true;
    const handler = async ({ tx }: { tx: typeof sql }) => {
      await outbox.enqueue(tx, { aggregateType: 'order', aggregateId: 'ord_1', eventType: 'order.created.v1', payload: {} });
      await tx`SELECT 1`;
      if (fail) throw new Error('the handler failed after enqueueing');
      return { status: 201 };
    };
    await expect(engine.runInTransaction(request, handler)).rejects.toThrow('the handler failed');
    // Rolled back with the handler: nothing to claim.
    expect(await outbox.source.claim({ owner: 'r', limit: 10, leaseMs: 1_000 })).toEqual([]);
    fail = false;
    expect((await engine.runInTransaction(request, handler)).kind).toBe('executed');
    expect((await engine.runInTransaction(request, handler)).kind).toBe('replayed');
    const claimed = await outbox.source.claim({ owner: 'r', limit: 10, leaseMs: 1_000 });
    expect(claimed.map((event) => [event.aggregateId, event.aggregateSeq])).toEqual([['ord_1', 1]]);
  });

  it('an idle relay is woken by NOTIFY through postgres.js, long before its poll interval', () => expectWokenByNotify(sql, schema));
});

describe('postgres outbox: PGlite', () => {
  const db = new PGlite();
  afterAll(() => db.close());
  runOutboxSourceConformance({ describe, it, expect }, {
    name: 'postgres outbox (PGlite)',
    createOutbox: () => outboxUnderTest(db, 'public'),
    raceSize: 4,
  });

  it('a runInTransaction handler enqueues in the same PGlite transaction', async () => {
    const table = await freshOutboxTable(db, 'public');
    const outbox = postgresOutbox({ db, table });
    const engine = createIdempotency({ store: postgresStore({ db }) });
    const request = { tenant: 'acme', operation: 'orders.create.v1', key: uniqueKey('k'), request: {} };
    const handler = async ({ tx }: { tx: PostgresTx }) => {
      await outbox.enqueue(tx, { aggregateType: 'order', aggregateId: 'ord_1', eventType: 'order.created.v1', payload: {} });
      return { status: 201 };
    };
    expect((await engine.runInTransaction(request, handler)).kind).toBe('executed');
    expect((await engine.runInTransaction(request, handler)).kind).toBe('replayed');
    const claimed = await outbox.source.claim({ owner: 'r', limit: 10, leaseMs: 1_000 });
    expect(claimed.map((event) => [event.aggregateId, event.aggregateSeq])).toEqual([['ord_1', 1]]);
  });

  it('an idle relay is woken by PGlite NOTIFY, long before its poll interval', () => expectWokenByNotify(db, 'public'));
});
