import { afterAll, expect, it } from 'vitest';
import { migrate } from '../../../src/index.js';
import { createPool, DATABASE_URL, dropSchema, uniqueSchema } from '../../support/database.js';

// The README's TypeORM example, run as written: `schema` is where migrate() put oncely's tables, next to the app's.
const databaseUrl = DATABASE_URL;
const schema = uniqueSchema('example_typeorm');
const admin = createPool({ max: 1 });
await migrate(admin, { schema });
await admin.query(`CREATE TABLE "${schema}".payments (id serial PRIMARY KEY, amount integer NOT NULL)`);

// #region typeorm
import { createIdempotency } from '@oncely/core';
import { postgresOutbox, postgresStore } from '@oncely/postgres';
import { typeormBridge } from '@oncely/postgres/typeorm';
import { DataSource, type EntityManager, EntitySchema } from 'typeorm';

const Payment = new EntitySchema<{ id: number; amount: number }>({
  name: 'Payment',
  tableName: 'payments',
  schema,
  columns: { id: { type: Number, primary: true, generated: true }, amount: { type: Number } },
});
const dataSource = await new DataSource({ type: 'postgres', url: databaseUrl, entities: [Payment] }).initialize();

const bridge = typeormBridge();
const idempotency = createIdempotency({ store: postgresStore({ db: dataSource, bridge, schema }) });
const outbox = postgresOutbox({ db: dataSource, bridge, schema });
const request = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k-1', request: { amount: 42 } };

// tx is the transaction's EntityManager: repositories, query builders, the outbox and the saved response share it.
const pay = async ({ tx }: { tx: EntityManager }) => {
  const payment = await tx.getRepository(Payment).save({ amount: 42 });
  await outbox.enqueue(tx, { aggregateType: 'payment', aggregateId: String(payment.id), eventType: 'payment.created', payload: payment });
  return { status: 201, body: { id: payment.id } };
};
const first = await idempotency.runInTransaction(request, pay);
const again = await idempotency.runInTransaction(request, pay);
console.log(first.kind, again.kind); // executed replayed

// Joining a transaction the application opened: oncely claims and saves inside it, the app commits.
const runner = dataSource.createQueryRunner();
await runner.startTransaction();
const joined = await idempotency.runInTransaction({ ...request, key: 'k-2' }, pay, { tx: runner.manager });
await runner.commitTransaction();
await runner.release();
console.log(joined.kind); // executed
// #endregion typeorm

afterAll(async () => {
  await dataSource.destroy();
  await dropSchema(admin, schema);
  await admin.end();
});

it('the README example: one payment per key, replayed byte-exact, the joined one committed by the application', async () => {
  expect([first.kind, again.kind, joined.kind]).toEqual(['executed', 'replayed', 'executed']);
  expect(again.kind === 'replayed' && first.kind === 'executed' ? again.response : undefined).toEqual(first.kind === 'executed' ? first.response : 'none');
  expect((await admin.query(`SELECT amount FROM "${schema}".payments`)).rowCount).toBe(2);
  expect((await admin.query(`SELECT 1 FROM "${schema}".oncely_outbox`)).rowCount).toBe(2);
});
