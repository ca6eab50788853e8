import { PGlite } from '@electric-sql/pglite';
import { createIdempotency } from '@oncely/core';
import { drizzleBridge } from '@oncely/postgres/drizzle';
import { runStoreConformance, uniqueKey } from '@oncely/testkit';
import { count, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, postgresInbox, postgresOutbox, postgresStore } from '../../src/index.js';
import { rawRecord } from '../support/database.js';
import { recordingPglite, type Sent } from '../support/recording-pglite.js';
import { paymentsTable } from './cases/bridge-case.js';
import { payments } from './cases/drizzle-node-postgres.js';

// One embedded database for the file (PGlite takes seconds to start): a table per conformance test.
const client = new PGlite();
const db = drizzle(client);
const bridge = drizzleBridge<typeof db>();
const schema = 'shop';
const table = payments(schema);
let tables = 0;

beforeAll(async () => {
  await migrate(client, { schema });
  await client.query(paymentsTable(schema));
});
afterAll(() => client.close());

runStoreConformance({ describe, it, expect }, {
  name: 'postgres through drizzle (PGlite)',
  createStore: async () => {
    const own = `records_${++tables}`;
    await migrate(client, { schema, tables: { oncely_idempotency: own } });
    return postgresStore({ db, bridge, schema, table: own });
  },
  inspect: (store, scope) => rawRecord(client, store.table, scope),
  openTransaction: (_store, body) => bridge.transaction(db, body),
  // One embedded connection: races run in turn, so fewer rounds prove as much.
  raceRounds: 3,
});

describe('drizzle (PGlite): transactional idempotency through the ORM transaction', () => {
  const idempotency = createIdempotency({ store: postgresStore({ db, bridge, schema }) });
  const outbox = postgresOutbox({ db, bridge, schema });
  const inbox = postgresInbox({ db, bridge, schema });
  const request = (key: string, amount = 10) => ({ tenant: 'acme', operation: 'payments.create.v1', key, request: { amount } });
  const rows = async (key: string) => (await db.select({ n: count() }).from(table).where(eq(table.key, key)))[0]!.n;

  it('50 concurrent duplicates write one row through Drizzle and answer the same response; a handler error keeps nothing; another body is a mismatch', async () => {
    const key = uniqueKey('dup');
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        idempotency.runInTransaction(request(key), async ({ tx }) => {
          const [row] = await tx.insert(table).values({ key, amount: 10 }).returning();
          await outbox.enqueue(tx, { aggregateType: 'payment', aggregateId: key, eventType: 'payment.created', payload: { key } });
          await inbox.process(tx, { consumer: 'pglite', eventId: key }, async () => undefined);
          return { status: 201, body: { id: row!.id } };
        }),
      ),
    );
    expect(results.filter((result) => result.kind === 'executed')).toHaveLength(1);
    const bodies = new Set(results.map((result) => JSON.stringify(result.kind === 'executed' || result.kind === 'replayed' ? result.response : result)));
    expect(bodies.size).toBe(1);
    expect(await rows(key)).toBe(1);
    expect((await client.query(`SELECT 1 FROM ${schema}.oncely_outbox WHERE aggregate_id = $1`, [key])).rows).toHaveLength(1);
    expect(await idempotency.runInTransaction(request(key, 99), async () => ({ status: 201 }))).toEqual({ kind: 'mismatch' });

    const failed = uniqueKey('error');
    await expect(
      idempotency.runInTransaction(request(failed), async ({ tx }) => {
        await tx.insert(table).values({ key: failed, amount: 10 });
        throw new Error('declined');
      }),
    ).rejects.toThrow('declined');
    expect(await rows(failed)).toBe(0);
    expect(await idempotency.get({ tenant: 'acme', operation: 'payments.create.v1', key: failed })).toBeUndefined();
  });

  it("Drizzle's nested transaction (a savepoint) inside the handler keeps the claim; a join commits with the caller's Drizzle transaction", async () => {
    const key = uniqueKey('nested');
    const result = await idempotency.runInTransaction(request(key), async ({ tx }) => {
      await tx.insert(table).values({ key, amount: 1 });
      await tx
        .transaction(async (inner) => {
          await inner.insert(table).values({ key, amount: 2 });
          throw new Error('to the savepoint');
        })
        .catch(() => undefined);
      return { status: 201 };
    });
    expect(result.kind).toBe('executed');
    expect(await rows(key)).toBe(1);

    const joined = uniqueKey('join');
    const first = await db.transaction((tx) =>
      idempotency.runInTransaction(request(joined), async ({ tx: inner }) => {
        await inner.insert(table).values({ key: joined, amount: 5 });
        return { status: 201 };
      }, { tx }),
    );
    expect(first.kind).toBe('executed');
    expect(await rows(joined)).toBe(1);
    expect((await db.transaction((tx) => idempotency.runInTransaction(request(joined), async () => ({ status: 500 }), { tx }))).kind).toBe('replayed');
  });
});

describe('drizzle (PGlite): calls per transactional request, as on oncely’s own PGlite driver', () => {
  it('a first request claims, writes and saves in one transaction; while replays dominate, a replay is one read outside any', async () => {
    const sent: Sent[] = [];
    const recorded = drizzle(recordingPglite(client, sent));
    const idempotency = createIdempotency({ store: postgresStore({ db: recorded, bridge: drizzleBridge<typeof recorded>(), schema }) });
    const key = uniqueKey('calls');
    const pay = async ({ tx }: { tx: Parameters<Parameters<typeof recorded.transaction>[0]>[0] }) => {
      await tx.insert(table).values({ key, amount: 10 });
      return { status: 201 };
    };
    const attempt = { tenant: 'acme', operation: 'payments.create.v1', key, request: {} };
    expect((await idempotency.runInTransaction(attempt, pay)).kind).toBe('executed');
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((call) => call.inTransaction)).toBe(true);
    for (let i = 0; i < 16; i++) expect((await idempotency.runInTransaction(attempt, pay)).kind).toBe('replayed');
    sent.length = 0;
    expect((await idempotency.runInTransaction(attempt, pay)).kind).toBe('replayed');
    expect(sent).toEqual([{ text: expect.stringMatching(/^SELECT fingerprint/), inTransaction: false }]);
  });
});
