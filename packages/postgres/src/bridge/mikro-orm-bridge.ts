import type { EntityManager, TransactionOptions } from '@mikro-orm/core';
import { OncelyError } from '@oncely/core';
import type { SqlResult } from '../driver/postgres-db.js';
import type { TransactionBridge } from './transaction-bridge.js';

/** The `pg` connection under Knex: what oncely sends its statements on, with their `$n` parameters as they are. */
interface PgConnection {
  query(text: string, values: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

/** The part of a Knex client (of the pool, or of one transaction) that hands out its connection. */
interface KnexClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
}

/** MikroORM 6's transaction context on a SQL driver: a Knex transaction. */
interface KnexTransaction {
  readonly client: KnexClient;
  isCompleted(): boolean;
}

/** Options of {@link mikroOrmBridge}: passed to every `em.transactional` oncely opens. */
export type MikroOrmBridgeOptions = Pick<TransactionOptions, 'isolationLevel'>;

async function run<R extends object>(connection: PgConnection, text: string, params: readonly unknown[]): Promise<SqlResult<R>> {
  const result = await connection.query(text, [...params]);
  return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length };
}

/**
 * oncely inside MikroORM 6's transactions (`@mikro-orm/postgresql`): a handler receives the
 * transaction's forked `EntityManager`, and oncely's claim and saved response run on the `pg`
 * connection of that transaction, the one its unit of work flushes on, before `em.transactional`
 * commits.
 *
 * MikroORM's own raw SQL (`em.execute`) takes `?` placeholders and inlines the values into the
 * text; oncely instead sends its `$n` statements with bound parameters on the transaction's
 * connection, so no value is ever written into SQL. To join a transaction the application opened
 * (`em.transactional`, `em.begin()`, `@Transactional()`), pass that `EntityManager`. `Em` types the
 * handlers' `tx`: `mikroOrmBridge<EntityManager>()` with `@mikro-orm/postgresql`'s `EntityManager`.
 */
export function mikroOrmBridge<Em extends EntityManager = EntityManager>(options: MikroOrmBridgeOptions = {}): TransactionBridge<Em, Em> {
  return {
    name: 'mikro-orm',
    transaction: (em, work) => em.transactional((tx) => work(tx as Em), options),
    async query<R extends object>(em: Em, text: string, params: readonly unknown[]) {
      const trx = em.getTransactionContext<KnexTransaction>();
      if (trx !== undefined) {
        // The connection stays the transaction's until it ends; after that it may be someone else's.
        if (trx.isCompleted()) {
          throw new OncelyError('invalid_state', 'oncely/postgres: this MikroORM transaction has ended; use its EntityManager only inside it');
        }
        return run<R>(await trx.client.acquireConnection(), text, params);
      }
      const { client } = (em.getConnection() as unknown as { getKnex(): { client: KnexClient } }).getKnex();
      const connection = await client.acquireConnection();
      try {
        return await run<R>(connection, text, params);
      } finally {
        await client.releaseConnection(connection);
      }
    },
  };
}
