import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { SqlResult } from '../driver/postgres-db.js';
import type { TransactionBridge } from './transaction-bridge.js';
import { endHeldTransaction, heldTransactionManager, typeormPgPool } from './typeorm-held-runner.js';

/** What the TypeORM bridge takes as the database: the application's `DataSource`, or any of its `EntityManager`s. */
export type TypeormDb = DataSource | EntityManager;

/** Options of {@link typeormBridge}. */
export interface TypeormBridgeOptions {
  /** The isolation level of the transactions oncely opens (TypeORM's default, the server's, when unset). */
  readonly isolationLevel?: 'READ UNCOMMITTED' | 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';
}

const isDataSource = (db: TypeormDb): db is DataSource => typeof (db as DataSource).createQueryRunner === 'function';

/** The `DataSource` of `db` (an `EntityManager` names its own). */
const sourceOf = (db: TypeormDb): DataSource => (isDataSource(db) ? db : db.connection);

/** One statement on `runner`, as `{ rows, rowCount }`: TypeORM's structured result carries both. */
async function structured<R extends object>(runner: QueryRunner, text: string, params: readonly unknown[]): Promise<SqlResult<R>> {
  const result = await runner.query(text, [...params], true);
  const rows = (result.records ?? []) as R[];
  return { rows, rowCount: result.affected ?? rows.length };
}

/**
 * oncely inside TypeORM's transactions: a handler receives the transaction's `EntityManager`, and
 * oncely's claim and saved response run through its `QueryRunner`, the same connection and the
 * same transaction as the handler's repositories and query builders.
 *
 * `db` is the `DataSource` (or an `EntityManager`). To join a transaction the application opened
 * (a `QueryRunner` after `startTransaction()`, a NestJS `@Transactional` manager), pass its
 * manager, `queryRunner.manager`, as the transaction to join.
 */
export function typeormBridge(options: TypeormBridgeOptions = {}): TransactionBridge<TypeormDb, EntityManager> {
  const { isolationLevel } = options;
  return {
    name: 'typeorm',
    transaction: (db, work) => (isolationLevel === undefined ? db.transaction(work) : db.transaction(isolationLevel, work)),
    async query<R extends object>(on: TypeormDb, text: string, params: readonly unknown[]) {
      // A transaction's manager is bound to its runner; anything else borrows a connection for one statement.
      const bound = isDataSource(on) ? undefined : on.queryRunner;
      if (bound !== undefined) return structured<R>(bound, text, params);
      const runner = sourceOf(on).createQueryRunner();
      try {
        return await structured<R>(runner, text, params);
      } finally {
        await runner.release();
      }
    },
    // On the postgres driver oncely opens the transaction on a connection of TypeORM's own pool:
    // the claim travels with BEGIN, the save with COMMIT, and the handler gets the manager of a
    // runner over that connection (see typeorm-held-runner.ts for the fields this relies on).
    pg: {
      // A manager bound to a runner already is a transaction (or a held connection): TypeORM's own path nests in it.
      pool: (db) => (isDataSource(db) || db.queryRunner === undefined ? typeormPgPool(sourceOf(db)) : undefined),
      // The level TypeORM's own transaction would set: the bridge's, else the DataSource's.
      isolationLevel: (db) => isolationLevel ?? (sourceOf(db).options as { readonly isolationLevel?: string }).isolationLevel,
      transactionOn: async (db, client) => heldTransactionManager(sourceOf(db), client),
      ended: endHeldTransaction,
    },
  };
}
