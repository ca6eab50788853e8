import { OncelyError } from '@oncely/core';
import { toStorageError } from '@oncely/core/adapter';
import type { Document, MongoClient } from 'mongodb';

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

/** Asks the server what it is (one `hello` round trip); driver failures become a `StorageError`. */
export async function detectDeployment(client: MongoClient): Promise<MongoDeployment> {
  try {
    return deploymentFromHello(await client.db('admin').command({ hello: 1 }));
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
