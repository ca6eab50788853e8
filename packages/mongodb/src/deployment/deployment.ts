import { OncelyError } from '@oncely/core';
import { toStorageError } from '@oncely/core/adapter';
import type { Db, Document, MongoClient } from 'mongodb';

/** The topology behind a client, as the server's `hello` reply describes it. */
export type MongoDeployment =
  | { readonly kind: 'standalone' }
  | { readonly kind: 'replica_set'; readonly setName: string }
  | { readonly kind: 'sharded' };

/** Reads a `hello` reply: `setName` means a replica set member, `msg: 'isdbgrid'` a mongos router. */
export function deploymentFromHello(hello: Document): MongoDeployment {
  if (hello.msg === 'isdbgrid') return { kind: 'sharded' };
  if (typeof hello.setName === 'string' && hello.setName.length > 0) return { kind: 'replica_set', setName: hello.setName };
  return { kind: 'standalone' };
}

/** Asks the server what it is: one `hello`, through any database (driver errors pass unchanged). */
export async function readDeployment(db: Db): Promise<MongoDeployment> {
  return deploymentFromHello(await db.command({ hello: 1 }));
}

/** Asks the server what it is (one `hello` round trip); driver failures become a `StorageError`. */
export async function detectDeployment(client: MongoClient): Promise<MongoDeployment> {
  try {
    return await readDeployment(client.db('admin'));
  } catch (error) {
    throw toStorageError('mongodb', 'detectDeployment', error);
  }
}

/** Throws `capability_missing` unless the deployment runs multi-document transactions. */
export function assertTransactions(
  deployment: MongoDeployment,
): asserts deployment is Exclude<MongoDeployment, { kind: 'standalone' }> {
  if (deployment.kind !== 'standalone') return;
  throw new OncelyError(
    'capability_missing',
    'oncely/mongodb: transactions need a replica set or a sharded cluster, but this server is a standalone ' +
      "(its hello reply has no setName and is not a mongos). Use mongoStore() for lease mode, or run the server as a single-node replica set: start mongod with --replSet rs0, run rs.initiate() once, and connect with ?replicaSet=rs0.",
  );
}

/** The refusal of lease mode behind a mongos router, and why. */
export function leaseModeOnRouter(): OncelyError {
  return new OncelyError(
    'capability_missing',
    'oncely/mongodb: lease mode is refused on a sharded cluster. Each mongos router fills in $$NOW from its own clock, ' +
      'so routers whose clocks differ disagree about when a lease lapsed: through a router 5 s fast, a retry takes over a ' +
      '30 s lease after 25 s and two handlers run at once. No server-side clock is shared by all routers ($$CLUSTER_TIME ' +
      'has 1 s steps and follows the fastest primary). Use mongoTransactionalStore() with runInTransaction(): there the ' +
      'transaction, not a lease, guards the record. Or keep the idempotency records on a replica set.',
  );
}

/**
 * Throws `capability_missing` where leases cannot be judged by one clock: behind mongos (see
 * {@link leaseModeOnRouter}). A standalone and a replica set judge every lease by their primary's clock.
 */
export function assertLeaseClock(deployment: MongoDeployment): void {
  if (deployment.kind === 'sharded') throw leaseModeOnRouter();
}
