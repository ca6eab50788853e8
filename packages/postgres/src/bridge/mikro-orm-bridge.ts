import type { EntityManager, TransactionOptions } from '@mikro-orm/core';
import { OncelyError } from '@oncely/core';
import type { SqlResult } from '../driver/postgres-db.js';
import type { TransactionBridge } from './transaction-bridge.js';
import { endHeldKnexTransaction, heldKnexTransaction, knexPgPool } from './knex-held-transaction.js';
import type { Knex } from 'knex';

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
/** The Knex instance under a MikroORM SQL connection (`@mikro-orm/knex`'s `getKnex()`), if it has one. */
const knexOf = (em: EntityManager): Knex | undefined => {
  const connection = em.getConnection() as unknown as { getKnex?: () => Knex };
  return typeof connection.getKnex === 'function' ? connection.getKnex() : undefined;
};

/** The Knex transaction a fork oncely built holds, to end it with the handler. */
const heldContexts = new WeakMap<EntityManager, Knex.Transaction>();

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
    // On Knex's pg client (MikroORM 6's SQL drivers) oncely opens the transaction itself, as for
    // knexBridge, and hands the handler a fork whose transaction context is Knex's trx over that
    // connection; the fork's unit of work flushes when the handler is done, before save + COMMIT.
    pg: {
      pool(em) {
        // An em already inside a transaction keeps em.transactional (it nests in that transaction).
        if (em.getTransactionContext() !== undefined) return undefined;
        const knex = knexOf(em);
        return knex === undefined ? undefined : knexPgPool(knex);
      },
      // The level em.transactional would set: oncely's claim opens the transaction at it.
      isolationLevel: () => options.isolationLevel,
      async transactionOn(em, client) {
        const trx = await heldKnexTransaction(knexOf(em)!, client);
        const fork = em.fork({ clear: false }) as Em;
        fork.setTransactionContext(trx);
        heldContexts.set(fork, trx);
        return fork;
      },
      async ended(fork, committing) {
        const trx = heldContexts.get(fork);
        heldContexts.delete(fork);
        try {
          // em.transactional flushes after its callback: entities persisted but not flushed commit with the response.
          if (committing) await fork.flush();
        } finally {
          if (trx !== undefined) await endHeldKnexTransaction(trx);
        }
      },
    },
  };
}
