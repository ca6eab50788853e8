import { PGlite } from '@electric-sql/pglite';
import { createIdempotency } from '@oncely/core';
import { prismaBridge, type PrismaTx } from '@oncely/postgres/prisma';
import { uniqueKey } from '@oncely/testkit';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, postgresInbox, postgresOutbox, postgresStore } from '../../src/index.js';
import { paymentsTable } from './cases/bridge-case.js';
import { PrismaClient } from './prisma/generated/client.js';

// Prisma 7 on PGlite through the community driver adapter (pglite-prisma-adapter): the same bridge,
// one embedded connection. Prisma qualifies model tables with the adapter's schema, here public.
type Tx = PrismaTx<PrismaClient>;
const db = new PGlite();
const prisma = new PrismaClient({ adapter: new PrismaPGlite(db) });
const bridge = prismaBridge<PrismaClient>({ maxWait: 30_000, timeout: 30_000 });
const store = postgresStore({ db: prisma, bridge });
const idempotency = createIdempotency({ store });

beforeAll(async () => {
  await migrate(db);
  await db.exec(paymentsTable('public'));
});
afterAll(async () => {
  await prisma.$disconnect();
  await db.close();
});

const request = (key: string, amount = 10) => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount } });
const rows = async (key: string) => (await db.query<{ amount: number }>('SELECT amount FROM bridge_payments WHERE idem_key = $1 ORDER BY id', [key])).rows.map((row) => row.amount);
const record = async (key: string) => (await db.query<{ state: string }>('SELECT state FROM oncely_idempotency WHERE idempotency_key = $1', [key])).rows[0]?.state;
const pay = (key: string, amount = 10) => async ({ tx }: { tx: Tx }) => {
  const payment = await tx.payment.create({ data: { key, amount } });
  return { status: 201, body: { id: String(payment.id), amount } };
};

describe('prisma 7 on PGlite (pglite-prisma-adapter): the bridge on an embedded PostgreSQL', () => {
  it('10 concurrent duplicates: one payment row through Prisma, every caller the same response', async () => {
    const key = uniqueKey('dup');
    const results = await Promise.all(Array.from({ length: 10 }, () => idempotency.runInTransaction(request(key), pay(key))));
    expect(results.filter((result) => result.kind === 'executed')).toHaveLength(1);
    const responses = new Set(results.map((result) => JSON.stringify(result.kind === 'executed' || result.kind === 'replayed' ? result.response : result)));
    expect(responses.size).toBe(1);
    expect([await rows(key), await record(key)]).toEqual([[10], 'succeeded']);
  });

  it('a handler error rolls back the payment and the claim; a mismatch runs nothing; a replay is byte-exact', async () => {
    const key = uniqueKey('error');
    const failure = new Error('declined');
    await expect(
      idempotency.runInTransaction(request(key), async (context) => {
        await pay(key)(context);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect([await rows(key), await record(key)]).toEqual([[], undefined]);
    const first = await idempotency.runInTransaction(request(key), pay(key));
    expect(await idempotency.runInTransaction(request(key, 99), pay(key, 99))).toEqual({ kind: 'mismatch' });
    const again = await idempotency.runInTransaction(request(key), pay(key));
    expect(again.kind === 'replayed' && first.kind === 'executed' && JSON.stringify(again.response.body) === JSON.stringify(first.response.body)).toBe(true);
    expect(await rows(key)).toEqual([10]);
  });

  it('a nested $transaction is refused by this adapter (no savepoints) without harming the claim; outbox and inbox commit in the same transaction', async () => {
    const key = uniqueKey('nested');
    const outbox = postgresOutbox({ db: prisma, bridge });
    const inbox = postgresInbox({ db: prisma, bridge });
    const result = await idempotency.runInTransaction(request(key), async ({ tx }) => {
      await tx.payment.create({ data: { key, amount: 1 } });
      // pglite-prisma-adapter 0.7 implements no createSavepoint: Prisma refuses before sending anything.
      const nested = await tx.$transaction((inner) => inner.payment.create({ data: { key, amount: 2 } })).catch((error: unknown) => error);
      expect(String(nested)).toMatch(/Nested transactions are not supported by adapter "pglite-prisma-adapter"/);
      await outbox.enqueue(tx, { aggregateType: 'payment', aggregateId: key, eventType: 'payment.created', payload: {} });
      expect(await inbox.process(tx, { consumer: 'pglite', eventId: key }, async () => undefined)).toBe('processed');
      return { status: 201 };
    });
    expect(result.kind).toBe('executed');
    expect([await rows(key), await record(key)]).toEqual([[1], 'succeeded']);
    expect((await db.query('SELECT 1 FROM oncely_outbox WHERE aggregate_id = $1', [key])).rows).toHaveLength(1);
    expect((await db.query('SELECT 1 FROM oncely_inbox WHERE event_id = $1', [key])).rows).toHaveLength(1);
  });

  it("joins the application's $transaction: its rollback drops the claim, the retry executes", async () => {
    const key = uniqueKey('join');
    await expect(
      prisma.$transaction(async (tx) => {
        expect((await idempotency.runInTransaction(request(key), pay(key), { tx })).kind).toBe('executed');
        throw new Error('the application rolls back');
      }),
    ).rejects.toThrow('the application rolls back');
    expect([await rows(key), await record(key)]).toEqual([[], undefined]);
    expect((await prisma.$transaction((tx) => idempotency.runInTransaction(request(key), pay(key), { tx }))).kind).toBe('executed');
    expect([await rows(key), await record(key)]).toEqual([[10], 'succeeded']);
  });
});
