import { afterAll, expect, it } from 'vitest';
import { migrate } from '../../../src/index.js';
import { createPool, DATABASE_URL, dropSchema, uniqueSchema } from '../../support/database.js';
import { paymentsTable } from '../cases/bridge-case.js';

// The README's `oncelyAdapter` example, run as written with the client test/bridges/prisma/schema.prisma generates.
const databaseUrl = DATABASE_URL;
const schema = uniqueSchema('example_prisma_held');
const admin = createPool({ max: 1 });
await migrate(admin, { schema });
await admin.query(paymentsTable(schema));

// #region prisma-held
import { createIdempotency } from '@oncely/core';
import { postgresStore } from '@oncely/postgres';
import { oncelyAdapter, prismaBridge, type PrismaTx } from '@oncely/postgres/prisma';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../prisma/generated/client.js';

const pool = new pg.Pool({ connectionString: databaseUrl });
const prisma = new PrismaClient({ adapter: oncelyAdapter(new PrismaPg(pool, { schema }), pool) });
const idempotency = createIdempotency({ store: postgresStore({ db: prisma, bridge: prismaBridge<PrismaClient>({ timeout: 15_000 }), schema }) });

const request = { tenant: 'acme', operation: 'payments.create.v1', key: 'k-held', request: { amount: 42 } };
const pay = async ({ tx }: { tx: PrismaTx<PrismaClient> }) => {
  const payment = await tx.payment.create({ data: { key: request.key, amount: 42 } });
  return { status: 201, body: { id: String(payment.id) } };
};
const first = await idempotency.runInTransaction(request, pay);
const again = await idempotency.runInTransaction(request, pay);
console.log(first.kind, again.kind); // executed replayed
// #endregion prisma-held

afterAll(async () => {
  await prisma.$disconnect();
  await pool.end();
  await dropSchema(admin, schema);
  await admin.end();
});

it('the README oncelyAdapter example: one payment, replayed byte-exact', async () => {
  expect([first.kind, again.kind]).toEqual(['executed', 'replayed']);
  expect(again.kind === 'replayed' && first.kind === 'executed' ? again.response : undefined).toEqual(first.kind === 'executed' ? first.response : 'none');
  expect((await admin.query(`SELECT amount FROM "${schema}".bridge_payments`)).rowCount).toBe(1);
});
