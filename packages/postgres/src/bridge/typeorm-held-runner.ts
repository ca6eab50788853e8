import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { PgClientLike, PgPoolLike } from '../driver/postgres-db.js';

/**
 * The fields of TypeORM's `PostgresQueryRunner` (1.x) oncely sets to hand the handler a runner
 * inside a transaction oncely opened on a connection it holds: `connect()` returns
 * `databaseConnection` when set, and `startTransaction` makes a savepoint once `transactionDepth` > 0.
 */
interface HeldRunnerFields {
  databaseConnection: unknown;
  isTransactionActive: boolean;
  transactionDepth: number;
  readonly isReleased: boolean;
}

/** What oncely reads of TypeORM's postgres driver: its master `pg.Pool`, and whether it replicates. */
interface PostgresDriverParts {
  readonly master?: Partial<PgPoolLike>;
  readonly isReplicated?: boolean;
}

/** A fresh runner has the fields oncely sets, at their initial values (checked before anything is sent). */
export function isHeldRunnerShape(runner: QueryRunner): boolean {
  const fields = runner as unknown as Partial<HeldRunnerFields>;
  return (
    fields.databaseConnection === undefined &&
    fields.isTransactionActive === false &&
    fields.transactionDepth === 0 &&
    fields.isReleased === false &&
    typeof runner.connect === 'function'
  );
}

/**
 * The `pg.Pool` under a `DataSource` on TypeORM's `postgres` driver, when oncely can open the
 * transaction itself: no replication and a query runner of the shape {@link isHeldRunnerShape}
 * checks. Otherwise undefined, and the bridge keeps TypeORM's own `manager.transaction`.
 */
export function typeormPgPool(source: DataSource): PgPoolLike | undefined {
  if (source.options.type !== 'postgres') return undefined;
  const driver = source.driver as unknown as PostgresDriverParts;
  const pool = driver.master;
  if (driver.isReplicated !== false || typeof pool?.connect !== 'function' || typeof pool.totalCount !== 'number') return undefined;
  // A runner that has not connected holds nothing: released at once, it only shows its shape.
  const probe = source.createQueryRunner('master');
  const fits = isHeldRunnerShape(probe);
  void probe.release();
  return fits ? (pool as PgPoolLike) : undefined;
}

/** TypeORM's transaction manager over `client`, inside the transaction oncely's claim + BEGIN opened: depth 1, so nested `transaction` calls make savepoints. */
export function heldTransactionManager(source: DataSource, client: PgClientLike): EntityManager {
  const runner = source.createQueryRunner('master');
  Object.assign(runner as unknown as HeldRunnerFields, { databaseConnection: client, isTransactionActive: true, transactionDepth: 1 });
  return runner.manager;
}

/** The handler is done: the runner stops serving the connection (its queries now throw), which it never acquired and so does not give back. */
export async function endHeldTransaction(manager: EntityManager): Promise<void> {
  const runner = manager.queryRunner;
  if (runner === undefined) return;
  Object.assign(runner as unknown as HeldRunnerFields, { isTransactionActive: false, transactionDepth: 0 });
  await runner.release();
}
