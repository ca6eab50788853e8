import { EntitySchema, MikroORM } from '@mikro-orm/postgresql';
import type { EntityManager } from '@mikro-orm/core';
import { mikroOrmBridge } from '@oncely/postgres/mikro-orm';
import type { BridgeCase } from './bridge-case.js';

/** The business row as a MikroORM entity; its schema is chosen per `em.create` (each suite has its own). */
export interface Payment {
  id: string;
  key: string;
  amount: number;
}

export const Payment = new EntitySchema<Payment>({
  name: 'Payment',
  tableName: 'bridge_payments',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true },
    key: { type: 'string', fieldName: 'idem_key' },
    amount: { type: 'integer' },
  },
});

/** MikroORM 6 on `@mikro-orm/postgresql` (Knex over pg): payments persisted through the unit of work and flushed in the transaction. */
export const mikroOrmPg: BridgeCase<EntityManager, EntityManager> = {
  name: 'mikro-orm 6 (pg)',
  bridge: mikroOrmBridge(),
  async open(url, max) {
    const orm = await MikroORM.init({
      clientUrl: url,
      entities: [Payment],
      pool: { min: 0, max },
      debug: false,
    });
    return { db: orm.em, close: () => orm.close(true) };
  },
  async insert(tx, schema, row) {
    const payment = tx.create(Payment, { key: row.key, amount: row.amount }, { schema });
    await tx.flush();
    return String(payment.id);
  },
  nesting: 'savepoint',
  // A nested em.transactional is a savepoint (MikroORM's default propagation, NESTED).
  nested: (tx, work) => tx.transactional((inner) => work(inner)),
  async backendPid(tx) {
    const rows = await tx.getConnection().execute<{ pid: number }[]>('SELECT pg_backend_pid() AS pid', [], 'all', tx.getTransactionContext());
    return rows[0]!.pid;
  },
};

export default mikroOrmPg;
