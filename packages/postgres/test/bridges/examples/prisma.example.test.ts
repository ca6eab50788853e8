import { afterAll, expect, it } from 'vitest';
import { migrate } from '../../../src/index.js';
import { createPool, DATABASE_URL, dropSchema, uniqueSchema } from '../../support/database.js';
import { paymentsTable } from '../cases/bridge-case.js';

// The README's Prisma example, run as written with the client test/bridges/prisma/schema.prisma generates
// (model Payment { id BigInt, key String, amount Int }): `schema` is where migrate() put oncely's tables.
const databaseUrl = DATABASE_URL;
const schema = uniqueSchema('example_prisma');
const admin = createPool({ max: 1 });
await migrate(admin, { schema });
await admin.query(paymentsTable(schema));

// #region prisma
import { createIdempotency } from '@oncely/core';
import { postgresOutbox, postgresStore } from '@oncely/postgres';
import { prismaBridge, type PrismaTx } from '@oncely/postgres/prisma';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../prisma/generated/client.js';

const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }, { schema }) });

// Options of every interactive transaction oncely opens: the handler runs inside it (Prisma's default timeout is 5 s).
const bridge = prismaBridge<PrismaClient>({ timeout: 15_000 });
const idempotency = createIdempotency({ store: postgresStore({ db: prisma, bridge, schema }) });
const outbox = postgresOutbox({ db: prisma, bridge, schema });
const request = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k-1', request: { amount: 42 } };

// tx is the interactive transaction's client (Prisma.TransactionClient): model calls, the outbox and the saved response share it.
const pay = async ({ tx }: { tx: PrismaTx<PrismaClient> }) => {
  const payment = await tx.payment.create({ data: { key: request.key, amount: 42 } });
  await outbox.enqueue(tx, { aggregateType: 'payment', aggregateId: String(payment.id), eventType: 'payment.created', payload: { id: String(payment.id) } });
  return { status: 201, body: { id: String(payment.id) } };
};
const first = await idempotency.runInTransaction(request, pay);
const again = await idempotency.runInTransaction(request, pay);
console.log(first.kind, again.kind); // executed replayed

// Joining a transaction the application opened: oncely claims and saves inside it, Prisma commits it.
const joined = await prisma.$transaction((tx) => idempotency.runInTransaction({ ...request, key: 'k-2' }, pay, { tx }));
console.log(joined.kind); // executed
// #endregion prisma

afterAll(async () => {
  await prisma.$disconnect();
  await dropSchema(admin, schema);
  await admin.end();
});

it('the README example: one payment per key, replayed byte-exact, the joined one committed by Prisma', async () => {
  expect([first.kind, again.kind, joined.kind]).toEqual(['executed', 'replayed', 'executed']);
  expect(again.kind === 'replayed' && first.kind === 'executed' ? again.response : undefined).toEqual(first.kind === 'executed' ? first.response : 'none');
  expect((await admin.query(`SELECT amount FROM "${schema}".bridge_payments`)).rowCount).toBe(2);
  expect((await admin.query(`SELECT 1 FROM "${schema}".oncely_outbox`)).rowCount).toBe(2);
});
