import { knexBridge } from '@oncely/postgres/knex';
import knex, { type Knex } from 'knex';
import type { BridgeCase } from './bridge-case.js';

/** Knex on its `pg` client. */
export const knexCase: BridgeCase<Knex, Knex.Transaction> = {
  name: 'knex (pg)',
  bridge: knexBridge(),
  async open(url, max) {
    const db = knex({ client: 'pg', connection: url, pool: { min: 0, max } });
    return { db, close: () => db.destroy() };
  },
  async insert(tx, schema, row) {
    const [inserted] = await tx.withSchema(schema).insert({ idem_key: row.key, amount: row.amount }).into('bridge_payments').returning('id');
    return String((inserted as { id: string }).id);
  },
  // Knex's nested transaction is a savepoint: trx.transaction(…).
  nesting: 'savepoint',
  nested: async (tx, work) => {
    await tx.transaction((inner) => work(inner));
  },
  async backendPid(tx) {
    const result = await tx.raw<{ rows: { pid: number }[] }>('SELECT pg_backend_pid() AS pid');
    return result.rows[0]!.pid;
  },
};

export default knexCase;
