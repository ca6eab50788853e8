import { isOncelyError } from '@oncely/core';
import type { InboxEvent } from '@oncely/core/outbox';
import { uniqueKey } from '@oncely/testkit';
import fc from 'fast-check';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { type PostgresInbox, type PostgresTx, postgresInbox, sqlDriver } from '../../src/index.js';
import { DATABASE_URL, migratedSchema } from '../support/database.js';

const { pool, schema } = migratedSchema('inbox', { max: 25 });
const duplicates: InboxEvent[] = [];
let inbox: PostgresInbox;

/** The consumer's business state: a counter per event it applied. */
const credit = (tx: PostgresTx, eventId: string) =>
  tx.query(
    `INSERT INTO "${schema}".credits (event_id, times) VALUES ($1, 1)
     ON CONFLICT (event_id) DO UPDATE SET times = credits.times + 1`,
    [eventId],
  );
const timesApplied = async (eventId: string) =>
  Number((await pool.query(`SELECT times FROM "${schema}".credits WHERE event_id = $1`, [eventId])).rows[0]?.times ?? 0);
const recorded = async (consumer: string, eventId: string) =>
  (await pool.query(`SELECT 1 FROM ${inbox.table} WHERE consumer = $1 AND event_id = $2`, [consumer, eventId])).rowCount === 1;

beforeAll(async () => {
  await pool.query(`CREATE TABLE "${schema}".credits (event_id text PRIMARY KEY, times int NOT NULL)`);
  inbox = postgresInbox({ db: pool, schema, onEvent: (event) => duplicates.push(event) });
});

describe('postgres inbox', () => {
  it('applies a new event and skips its redelivery as a duplicate', async () => {
    const eventId = uniqueKey('evt');
    const deliver = () => inbox.run({ consumer: 'billing', eventId }, (tx) => credit(tx, eventId));
    expect(await deliver()).toBe('processed');
    expect(await deliver()).toBe('duplicate');
    expect(await timesApplied(eventId)).toBe(1);
    expect(duplicates.filter((event) => event.eventId === eventId)).toEqual([
      { type: 'inbox_duplicate', at: expect.any(Number), consumer: 'billing', eventId },
    ]);
  });

  it('each consumer deduplicates on its own', async () => {
    const eventId = uniqueKey('evt');
    expect(await inbox.run({ consumer: 'billing', eventId }, async () => undefined)).toBe('processed');
    expect(await inbox.run({ consumer: 'shipping', eventId }, async () => undefined)).toBe('processed');
    expect(await inbox.run({ consumer: 'shipping', eventId }, async () => undefined)).toBe('duplicate');
  });

  it('a handler that throws rolls back its writes and the inbox row: the redelivery applies the event', async () => {
    const eventId = uniqueKey('evt');
    const boom = new Error('ledger service unavailable');
    const failed = await inbox
      .run({ consumer: 'billing', eventId }, async (tx) => {
        await credit(tx, eventId);
        throw boom;
      })
      .catch((error: unknown) => error);
    expect(failed).toBe(boom);
    expect(await recorded('billing', eventId)).toBe(false);
    expect(await timesApplied(eventId)).toBe(0);
    expect(await inbox.run({ consumer: 'billing', eventId }, (tx) => credit(tx, eventId))).toBe('processed');
    expect(await timesApplied(eventId)).toBe(1);
  });

  it('process writes in the caller’s transaction: a rollback there forgets the event', async () => {
    const eventId = uniqueKey('evt');
    const driver = sqlDriver(pool);
    const outcome = await driver.transaction(async (tx) => ({
      action: 'rollback',
      value: await inbox.process(tx, { consumer: 'billing', eventId }, (inner) => credit(inner, eventId)),
    }));
    expect(outcome).toBe('processed');
    expect(await recorded('billing', eventId)).toBe(false);
    expect(await timesApplied(eventId)).toBe(0);
  });

  it('concurrent deliveries of one event apply it once: the others wait on the key and see a duplicate', async () => {
    const eventId = uniqueKey('evt');
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () =>
        inbox.run({ consumer: 'billing', eventId }, async (tx) => {
          await credit(tx, eventId);
          // Hold the row lock a moment so the other deliveries queue on the primary key.
          await tx.query('SELECT pg_sleep(0.05)');
        }),
      ),
    );
    expect(outcomes.filter((outcome) => outcome === 'processed')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'duplicate')).toHaveLength(19);
    expect(await timesApplied(eventId)).toBe(1);
  });

  it('whatever the redeliveries and handler failures, every event is applied exactly once in the end', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ event: fc.nat(5), fails: fc.boolean() }), { maxLength: 25 }),
        async (deliveries) => {
          const ids = Array.from({ length: 6 }, () => uniqueKey('evt'));
          const deliver = (eventId: string, fails: boolean) =>
            inbox
              .run({ consumer: 'billing', eventId }, async (tx) => {
                await credit(tx, eventId);
                if (fails) throw new Error('crash before commit');
              })
              .catch(() => 'failed');
          for (const { event, fails } of deliveries) await deliver(ids[event]!, fails);
          // The broker keeps redelivering until one delivery succeeds.
          for (const eventId of ids) await deliver(eventId, false);
          for (const eventId of ids) expect(await timesApplied(eventId)).toBe(1);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('purgeProcessed deletes rows older than the window only', async () => {
    const local = postgresInbox({ db: pool, schema, table: 'oncely_inbox' });
    const old = uniqueKey('evt');
    await local.run({ consumer: 'purge-test', eventId: old }, async () => undefined);
    await pool.query(`UPDATE ${local.table} SET processed_at = now() - interval '2 days' WHERE event_id = $1`, [old]);
    const fresh = uniqueKey('evt');
    await local.run({ consumer: 'purge-test', eventId: fresh }, async () => undefined);
    expect(await local.purgeProcessed({ olderThanMs: 86_400_000, limit: 1_000 })).toBeGreaterThanOrEqual(1);
    expect(await recorded('purge-test', old)).toBe(false);
    expect(await recorded('purge-test', fresh)).toBe(true);
  });

  it('refuses a missing consumer or event id before any SQL, and reports failures as StorageErrors', async () => {
    let statements = 0;
    const counting: PostgresTx = {
      query: async () => {
        statements += 1;
        throw new Error('connection terminated');
      },
    };
    for (const input of [{ consumer: '', eventId: 'e' }, { consumer: 'c', eventId: '' }]) {
      await expect(inbox.process(counting, input, async () => undefined)).rejects.toMatchObject({ code: 'invalid_event' });
    }
    expect(statements).toBe(0);
    const failure = await inbox.process(counting, { consumer: 'c', eventId: 'e' }, async () => undefined).catch((e: unknown) => e);
    expect(isOncelyError(failure, 'storage_error')).toBe(true);
  });

  it('works on a single pg.Client', async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      const local = postgresInbox({ db: client, schema });
      const eventId = uniqueKey('evt');
      expect(await local.run({ consumer: 'billing', eventId }, (tx) => credit(tx, eventId))).toBe('processed');
      expect(await local.run({ consumer: 'billing', eventId }, (tx) => credit(tx, eventId))).toBe('duplicate');
      expect(await timesApplied(eventId)).toBe(1);
    } finally {
      await client.end();
    }
  });
});

describe('postgres inbox: a batch in one transaction', () => {
  it('applies each new event of a batch once, skips duplicates, and commits them together', async () => {
    const ids = [uniqueKey('evt'), uniqueKey('evt'), uniqueKey('evt')];
    await inbox.run({ consumer: 'batch', eventId: ids[1]! }, (tx) => credit(tx, ids[1]!));
    const result = await inbox.runBatch('batch', ids.map((eventId) => ({ eventId, fn: (tx: PostgresTx) => credit(tx, eventId) })));
    expect(result).toEqual({ outcomes: ['processed', 'duplicate', 'processed'] });
    for (const eventId of ids) expect(await timesApplied(eventId)).toBe(1);
    const again = await inbox.runBatch('batch', ids.map((eventId) => ({ eventId, fn: (tx: PostgresTx) => credit(tx, eventId) })));
    expect(again.outcomes).toEqual(['duplicate', 'duplicate', 'duplicate']);
  });

  it('an event the batch holds twice is applied once, at its first place', async () => {
    const [a, b] = [uniqueKey('evt'), uniqueKey('evt')];
    const result = await inbox.runBatch('batch', [a, b, a].map((eventId) => ({ eventId: eventId!, fn: (tx: PostgresTx) => credit(tx, eventId!) })));
    expect(result).toEqual({ outcomes: ['processed', 'processed', 'duplicate'] });
    expect([await timesApplied(a!), await timesApplied(b!)]).toEqual([1, 1]);
  });

  it('a poison event is isolated: the events before it commit, it and the later ones are left for a redelivery', async () => {
    const ids = Array.from({ length: 5 }, () => uniqueKey('evt'));
    const poison = new Error('cannot apply');
    const result = await inbox.runBatch(
      'batch',
      ids.map((eventId, index) => ({
        eventId,
        fn: async (tx: PostgresTx) => {
          await credit(tx, eventId);
          if (index === 2) throw poison;
        },
      })),
    );
    expect(result).toEqual({ outcomes: ['processed', 'processed'], failed: { index: 2, error: poison } });
    expect(await Promise.all(ids.map(timesApplied))).toEqual([1, 1, 0, 0, 0]);
    expect(await Promise.all(ids.map((eventId) => recorded('batch', eventId)))).toEqual([true, true, false, false, false]);
    // The redelivery from the poison on applies the rest once the poison is fixed.
    const rest = await inbox.runBatch('batch', ids.slice(2).map((eventId) => ({ eventId, fn: (tx: PostgresTx) => credit(tx, eventId) })));
    expect(rest.outcomes).toEqual(['processed', 'processed', 'processed']);
    expect(await Promise.all(ids.map(timesApplied))).toEqual([1, 1, 1, 1, 1]);
  });

  it('refuses a malformed id before touching storage, and a first-event failure commits nothing', async () => {
    await expect(inbox.runBatch('batch', [{ eventId: '', fn: async () => undefined }])).rejects.toMatchObject({ code: 'invalid_event' });
    const eventId = uniqueKey('evt');
    const result = await inbox.runBatch('batch', [{ eventId, fn: async () => Promise.reject(new Error('no')) }]);
    expect([result.outcomes, result.failed?.index]).toEqual([[], 0]);
    expect(await recorded('batch', eventId)).toBe(false);
  });
});
