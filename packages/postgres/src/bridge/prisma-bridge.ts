import type { SqlResult } from '../driver/postgres-db.js';
import { endHeldTransaction, heldAdapterOf, heldPool, openHeldTransaction } from './prisma-held-adapter.js';
import { returnsRows } from './returns-rows.js';
import type { TransactionBridge } from './transaction-bridge.js';

/** What oncely calls on a Prisma client, or on the client of one of its interactive transactions. */
export interface PrismaRawClient {
  // biome-ignore lint/suspicious/noExplicitAny: Prisma's own signature.
  $queryRawUnsafe<T = unknown>(query: string, ...values: any[]): PromiseLike<T>;
  // biome-ignore lint/suspicious/noExplicitAny: Prisma's own signature.
  $executeRawUnsafe(query: string, ...values: any[]): PromiseLike<number>;
}

/** The options of an interactive transaction, as Prisma takes them. */
export interface PrismaTransactionOptions {
  /** How long to wait for a connection from the pool, ms (Prisma's default 2,000). */
  readonly maxWait?: number;
  /** How long the transaction may stay open, ms (Prisma's default 5,000): the handler runs inside it. */
  readonly timeout?: number;
  readonly isolationLevel?: 'ReadUncommitted' | 'ReadCommitted' | 'RepeatableRead' | 'Serializable';
}

/** A generated `PrismaClient` (Prisma 7, with the `@prisma/adapter-pg` driver adapter). */
export interface PrismaClientLike extends PrismaRawClient {
  // biome-ignore lint/suspicious/noExplicitAny: matched against the client's own overloads.
  $transaction<R>(fn: (tx: any) => Promise<R>, options?: PrismaTransactionOptions): PromiseLike<R>;
}

/** The interactive-transaction client `client.$transaction(fn)` hands to `fn` (Prisma's `Prisma.TransactionClient`). */
// biome-ignore lint/suspicious/noExplicitAny: only the transaction client is inferred.
export type PrismaTx<C extends PrismaClientLike> = C['$transaction'] extends (fn: (tx: infer Tx) => any, ...rest: any[]) => any ? Tx : never;

/**
 * oncely inside Prisma's interactive transactions: a handler receives the transaction client
 * (`Prisma.TransactionClient`), and oncely's claim and saved response run through its
 * `$queryRawUnsafe` / `$executeRawUnsafe`, in the same transaction as the handler's model calls.
 *
 * Prisma answers a raw statement either with rows or with a count, never both: a statement that
 * returns rows (a query, or a write with RETURNING) goes through `$queryRawUnsafe` and counts its
 * rows, any other through `$executeRawUnsafe`. Parameters are always bound, never inlined.
 * `options` apply to every transaction oncely opens; raise `timeout` above Prisma's 5 s when
 * handlers may run longer. To join a transaction the application opened, pass its transaction client.
 */
export function prismaBridge<C extends PrismaClientLike>(options: PrismaTransactionOptions = {}): TransactionBridge<C, PrismaTx<C>> {
  return {
    name: 'prisma',
    transaction: async (client, work) => client.$transaction((tx: PrismaTx<C>) => work(tx), options),
    async query<R extends object>(on: C | PrismaTx<C>, text: string, params: readonly unknown[]): Promise<SqlResult<R>> {
      const raw = on as PrismaRawClient;
      if (returnsRows(text)) {
        const rows = await raw.$queryRawUnsafe<R[]>(text, ...params);
        return { rows, rowCount: rows.length };
      }
      return { rows: [], rowCount: await raw.$executeRawUnsafe(text, ...params) };
    },
    // On a client whose adapter oncelyAdapter wrapped, oncely opens the transaction on a connection
    // of its pool (claim with BEGIN, save with COMMIT) and Prisma's interactive transaction runs on
    // it; any other client keeps Prisma's own $transaction.
    pg: {
      pool: (client) => {
        const adapter = heldAdapterOf(client);
        return adapter && heldPool(adapter);
      },
      isolationLevel: () => options.isolationLevel,
      transactionOn: (client, connection) =>
        openHeldTransaction<PrismaTx<C> & object>(heldAdapterOf(client)!, connection, options.isolationLevel, (callback) =>
          client.$transaction(callback, options),
        ),
      ended: (tx, committing) => endHeldTransaction(tx as object, committing),
    },
  };
}
