import { afterAll, expect, it } from 'vitest';
import { migrate } from '../../../src/index.js';
import { createPool, DATABASE_URL, dropSchema, uniqueSchema } from '../../support/database.js';

// The README's MikroORM example, run as written: `schema` is where migrate() put oncely's tables, next to the app's.
const databaseUrl = DATABASE_URL;
const schema = uniqueSchema('example_mikro_orm');
const admin = createPool({ max: 1 });
await migrate(admin, { schema });
await admin.query(`CREATE TABLE "${schema}".payments (id serial PRIMARY KEY, amount integer NOT NULL)`);

// #region mikro-orm
import { createIdempotency } from '@oncely/core';
import { postgresOutbox, postgresStore } from '@oncely/postgres';
import { mikroOrmBridge } from '@oncely/postgres/mikro-orm';
import { type EntityManager, EntitySchema, MikroORM } from '@mikro-orm/postgresql';

const Payment = new EntitySchema<{ id: number; amount: number }>({
  name: 'Payment',
  tableName: 'payments',
  schema,
  properties: { id: { type: 'integer', primary: true }, amount: { type: 'integer' } },
});
const orm = await MikroORM.init({ clientUrl: databaseUrl, entities: [Payment] });

const bridge = mikroOrmBridge<EntityManager>();
const idempotency = createIdempotency({ store: postgresStore({ db: orm.em, bridge, schema }) });
const outbox = postgresOutbox({ db: orm.em, bridge, schema });
const request = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k-1', request: { amount: 42 } };

// tx is the EntityManager forked for em.transactional: the unit of work flushes in the transaction, before COMMIT.
const pay = async ({ tx }: { tx: EntityManager }) => {
  const payment = tx.create(Payment, { amount: 42 });
  await tx.flush();
  await outbox.enqueue(tx, { aggregateType: 'payment', aggregateId: String(payment.id), eventType: 'payment.created', payload: { id: payment.id } });
  return { status: 201, body: { id: payment.id } };
};
const first = await idempotency.runInTransaction(request, pay);
const again = await idempotency.runInTransaction(request, pay);
console.log(first.kind, again.kind); // executed replayed

// Joining a transaction the application opened (em.transactional, @Transactional()): oncely claims and saves inside it.
const joined = await orm.em.fork().transactional((em) => idempotency.runInTransaction({ ...request, key: 'k-2' }, pay, { tx: em }));
console.log(joined.kind); // executed
// #endregion mikro-orm

afterAll(async () => {
  await orm.close(true);
  await dropSchema(admin, schema);
  await admin.end();
});

it('the README example: one payment per key, replayed byte-exact, the joined one committed with the application transaction', async () => {
  expect([first.kind, again.kind, joined.kind]).toEqual(['executed', 'replayed', 'executed']);
  expect(again.kind === 'replayed' && first.kind === 'executed' ? again.response : undefined).toEqual(first.kind === 'executed' ? first.response : 'none');
  expect((await admin.query(`SELECT amount FROM "${schema}".payments`)).rowCount).toBe(2);
  expect((await admin.query(`SELECT 1 FROM "${schema}".oncely_outbox`)).rowCount).toBe(2);
});
