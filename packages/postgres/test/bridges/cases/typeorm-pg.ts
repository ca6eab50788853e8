import { typeormBridge, type TypeormDb } from '@oncely/postgres/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { BridgeCase } from './bridge-case.js';

/** TypeORM 1.x on its `postgres` driver (pg): payments written with its query builder inside the transaction's manager. */
export const typeormPg: BridgeCase<TypeormDb, EntityManager> = {
  name: 'typeorm (pg)',
  bridge: typeormBridge(),
  async open(url, max) {
    const dataSource = new DataSource({ type: 'postgres', url, poolSize: max, synchronize: false, logging: false });
    await dataSource.initialize();
    return { db: dataSource, close: () => dataSource.destroy() };
  },
  async insert(tx, schema, row) {
    const result = await tx
      .createQueryBuilder()
      .insert()
      .into(`${schema}.bridge_payments`, ['idem_key', 'amount'])
      .values({ idem_key: row.key, amount: row.amount })
      .returning('id')
      .execute();
    return String((result.raw as { id: string }[])[0]!.id);
  },
  nesting: 'savepoint',
  // A transaction inside a transaction's manager is a savepoint on the same query runner.
  nested: (tx, work) => tx.transaction((inner) => work(inner)),
  async backendPid(tx) {
    const rows = (await tx.query('SELECT pg_backend_pid() AS pid')) as { pid: number }[];
    return rows[0]!.pid;
  },
};

export default typeormPg;
