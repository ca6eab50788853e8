import { createIdempotency, isOncelyError } from '@oncely/core';
import type { NewOutboxEvent } from '@oncely/core/outbox';
import { uniqueKey } from '@oncely/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresDb, type PostgresOutbox, type PostgresTx, postgresOutbox, postgresStore, sqlDriver } from '../../src/index.js';
import { createPool, dropSchema, uniqueSchema } from '../support/database.js';
import { freshOutboxTable } from './outbox-support.js';

const pool = createPool({ max: 40 });
const schema = uniqueSchema('enqueue');
let outbox: PostgresOutbox;

const event = (aggregateId: string, extra: Record<string, unknown> = {}) => ({
  aggregateType: 'order',
  aggregateId,
  eventType: 'order.updated.v1',
  payload: { at: aggregateId },
  ...extra,
});

/** Runs `work` in a transaction that commits, or rolls back when `rollback` is set. */
function inTransaction<T>(db: PostgresDb, work: (tx: PostgresTx) => Promise<T>, rollback = false): Promise<T> {
  return sqlDriver(db).transaction(async (tx) => ({ action: rollback ? 'rollback' : 'commit', value: await work(tx) }));
}

const sequencesOf = async (aggregateId: string) =>
  (await pool.query(`SELECT aggregate_seq::int AS seq FROM ${outbox.table} WHERE aggregate_id = $1 ORDER BY 1`, [aggregateId])).rows.map(
    (row: { seq: number }) => row.seq,
  );

beforeAll(async () => {
  outbox = postgresOutbox({ db: pool, schema, table: await freshOutboxTable(pool, schema) });
});

afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

describe('postgres outbox: enqueue', () => {
  it('numbers concurrent enqueues of one aggregate 1..n, and a higher number is never visible before a lower one', async () => {
    const aggregate = uniqueKey('ord');
    let writing = true;
    const seen: number[][] = [];
    // A reader polls while the writers race: every snapshot must hold a prefix 1..k, never a gap.
    const watcher = (async () => {
      while (writing) seen.push(await sequencesOf(aggregate));
    })();
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        inTransaction(pool, async (tx) => {
          const written = await outbox.enqueue(tx, event(aggregate));
          // Hold the transaction open a little, so commits interleave with other enqueues.
          await new Promise((resolve) => setTimeout(resolve, (i * 7) % 13));
          return written;
        }),
      ),
    );
    writing = false;
    await watcher;
    expect(await sequencesOf(aggregate)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(seen.length).toBeGreaterThan(0);
    for (const snapshot of seen) expect(snapshot).toEqual(snapshot.map((_, i) => i + 1));
  });

  it('numbers each aggregate on its own', async () => {
    const [a, b] = [uniqueKey('ord'), uniqueKey('ord')];
    const written = await inTransaction(pool, async (tx) => [
      await outbox.enqueue(tx, event(a)),
      await outbox.enqueue(tx, event(b)),
      await outbox.enqueue(tx, event(a)),
      await outbox.enqueue(tx, { ...event(a), aggregateType: 'invoice' }),
    ]);
    expect(written.map((e) => e.aggregateSeq)).toEqual([1, 1, 2, 1]);
  });

  it('a rolled-back enqueue leaves neither an event nor a gap in the numbering', async () => {
    const aggregate = uniqueKey('ord');
    await inTransaction(pool, (tx) => outbox.enqueue(tx, event(aggregate)), true);
    expect(await sequencesOf(aggregate)).toEqual([]);
    const written = await inTransaction(pool, (tx) => outbox.enqueue(tx, event(aggregate)));
    expect(written.aggregateSeq).toBe(1);
  });

  it('keeps the caller’s eventId and sequence, and refuses a sequence that is not higher without aborting the transaction', async () => {
    const aggregate = uniqueKey('ord');
    const eventId = uniqueKey('evt');
    const written = await inTransaction(pool, async (tx) => {
      const first = await outbox.enqueue(tx, event(aggregate, { eventId, aggregateSeq: 10 }));
      const refused = await outbox.enqueue(tx, event(aggregate, { aggregateSeq: 10 })).catch((error: unknown) => error);
      expect(isOncelyError(refused, 'outbox_sequence_conflict')).toBe(true);
      const next = await outbox.enqueue(tx, event(aggregate));
      return [first, next];
    });
    expect(written.map((e) => [e.eventId === eventId, e.aggregateSeq])).toEqual([
      [true, 10],
      [false, 11],
    ]);
    expect(await sequencesOf(aggregate)).toEqual([10, 11]);
  });

  it('refuses a second event with the same eventId', async () => {
    const eventId = uniqueKey('evt');
    await inTransaction(pool, (tx) => outbox.enqueue(tx, event(uniqueKey('ord'), { eventId })));
    const refused = await inTransaction(pool, (tx) => outbox.enqueue(tx, event(uniqueKey('ord'), { eventId }))).catch((e: unknown) => e);
    expect(isOncelyError(refused, 'duplicate_event')).toBe(true);
  });

  it('refuses a payload jsonb cannot hold with invalid_event', async () => {
    const refused = await inTransaction(pool, (tx) => outbox.enqueue(tx, event(uniqueKey('ord'), { payload: { note: 'a\u0000b' } }))).catch(
      (e: unknown) => e,
    );
    expect(isOncelyError(refused, 'invalid_event')).toBe(true);
  });

  it('refuses an invalid event before any SQL runs', async () => {
    let statements = 0;
    const counting: PostgresTx = {
      query: async () => {
        statements += 1;
        return { rows: [], rowCount: 0 };
      },
    };
    for (const bad of [event(''), { ...event('x'), payload: Number.NaN }, { ...event('x'), aggregateSeq: 0 }]) {
      await expect(outbox.enqueue(counting, bad as NewOutboxEvent)).rejects.toMatchObject({ code: 'invalid_event' });
    }
    expect(statements).toBe(0);
  });

  it('bad input (payload not JSON, missing aggregate or type, a sequence not above the last) is a typed error in the caller’s transaction, and writes nothing', async () => {
    const aggregate = uniqueKey('ord');
    await inTransaction(pool, (tx) => outbox.enqueue(tx, event(aggregate, { aggregateSeq: 3 })));
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const fresh = uniqueKey('ord');
    const bad: [string, Record<string, unknown>][] = [
      ['invalid_event', { ...event(fresh), payload: cycle }],
      ['invalid_event', { ...event(fresh), payload: { n: 10n } }],
      ['invalid_event', { ...event(fresh), payload: undefined }],
      ['invalid_event', { ...event(fresh), payload: () => 1 }],
      ['invalid_event', { ...event(fresh), aggregateId: undefined }],
      ['invalid_event', { ...event(fresh), aggregateType: '' }],
      ['invalid_event', { ...event(fresh), eventType: undefined }],
      ['outbox_sequence_conflict', event(aggregate, { aggregateSeq: 3 })],
      ['outbox_sequence_conflict', event(aggregate, { aggregateSeq: 2 })],
    ];
    await inTransaction(pool, async (tx) => {
      for (const [code, input] of bad) {
        await expect(outbox.enqueue(tx, input as unknown as NewOutboxEvent)).rejects.toMatchObject({ code });
      }
      // Still usable: nothing above aborted it.
      await tx.query('SELECT 1');
    });
    const count = async (table: string, id: string) =>
      Number((await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE aggregate_id = $1`, [id])).rows[0].n);
    const [tableName] = outbox.table.split('.').slice(-1).map((part) => part.replaceAll('"', ''));
    for (const table of [outbox.table, `"${schema}"."${tableName}_sequences"`, `"${schema}"."${tableName}_aggregates"`]) {
      expect(await count(table, fresh)).toBe(0);
    }
    expect(await sequencesOf(aggregate)).toEqual([3]);
    expect(Number((await pool.query(`SELECT last_seq::int AS n FROM "${schema}"."${tableName}_sequences" WHERE aggregate_id = $1`, [aggregate])).rows[0].n)).toBe(3);
  });

  it('wraps a database failure as a StorageError', async () => {
    const failing: PostgresTx = {
      query: async () => {
        throw new Error('connection terminated');
      },
    };
    await expect(outbox.enqueue(failing, event('x'))).rejects.toMatchObject({ code: 'storage_error' });
  });
});

describe('postgres outbox: enqueue inside runInTransaction', () => {
  const request = (key: string) => ({ tenant: 'acme', operation: 'orders.create.v1', key, request: { sku: 'book-1' } });

  it('the event commits with the business write and the saved result, once, and a replay adds none', async () => {
    const engine = createIdempotency({ store: postgresStore({ db: pool, schema }) });
    const key = uniqueKey('k');
    const order = uniqueKey('ord');
    const handler = async ({ tx }: { tx: PostgresTx }) => {
      await outbox.enqueue(tx, event(order, { eventType: 'order.created.v1' }));
      return { status: 201, body: { id: order } };
    };
    expect((await engine.runInTransaction(request(key), handler)).kind).toBe('executed');
    expect((await engine.runInTransaction(request(key), handler)).kind).toBe('replayed');
    expect(await sequencesOf(order)).toEqual([1]);
  });

  it('a handler that fails after enqueueing leaves no event behind, and the retry enqueues it once', async () => {
    const engine = createIdempotency({ store: postgresStore({ db: pool, schema }) });
    const key = uniqueKey('k');
    const order = uniqueKey('ord');
    let crash = true;
    const handler = async ({ tx }: { tx: PostgresTx }) => {
      await outbox.enqueue(tx, event(order));
      if (crash) throw new Error('payment provider timed out');
      return { status: 201, body: { id: order } };
    };
    await expect(engine.runInTransaction(request(key), handler)).rejects.toThrow('payment provider timed out');
    expect(await sequencesOf(order)).toEqual([]);
    crash = false;
    expect((await engine.runInTransaction(request(key), handler)).kind).toBe('executed');
    expect(await sequencesOf(order)).toEqual([1]);
  });
});
