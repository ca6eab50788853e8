import * as driver7 from 'mongodb';
import * as driver6 from 'mongodb6';
import { deploymentFromHello, type MongoDeployment } from '../../src/index.js';

/** Why a real-server suite did not run. */
export const SKIP_REASON =
  'MONGODB_URL is not set (no MongoDB server runs where this repository is developed and tested). ' +
  'Run: MONGODB_URL=mongodb://localhost:27017/?replicaSet=rs0 npm test -w @oncely/mongodb';

/** Whether a real-server suite runs in this process. */
export type RealServer =
  | { readonly kind: 'available'; readonly url: string; readonly deployment?: MongoDeployment }
  | { readonly kind: 'skipped'; readonly reason: string; readonly summary: string };

/** Decides whether `suite` runs and, when it cannot, says so by name on stderr as the file is collected. */
export function realServer(suite: string, env: Record<string, string | undefined> = process.env): RealServer {
  const url = env.MONGODB_URL;
  if (url) return { kind: 'available', url };
  console.warn(`@oncely/mongodb: SKIPPED "${suite}": ${SKIP_REASON}`);
  return { kind: 'skipped', reason: SKIP_REASON, summary: 'MONGODB_URL is not set' };
}

/** A suite title that carries the skip reason into the test report as well. */
export function suiteTitle(suite: string, server: RealServer): string {
  return server.kind === 'skipped' ? `${suite} [SKIPPED: ${server.summary}]` : suite;
}

/** Both supported majors of the official driver, so every real-server suite runs on each. */
export const DRIVERS = [
  { name: 'driver 7.x', MongoClient: driver7.MongoClient },
  { name: 'driver 6.x', MongoClient: driver6.MongoClient as unknown as typeof driver7.MongoClient },
] as const;

/** A database no other run uses; suites drop it when they finish. */
export function testDatabaseName(label: string): string {
  return `oncely_${label}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}

/** Asks the server at `server.url` what it is (one `hello`, at collection time). */
export async function withDeployment(server: RealServer): Promise<RealServer> {
  if (server.kind === 'skipped' || server.deployment) return server;
  const client = new driver7.MongoClient(server.url);
  try {
    return { ...server, deployment: deploymentFromHello(await client.db('admin').command({ hello: 1 })) };
  } finally {
    await client.close();
  }
}

/** Runs `suite` only where `runs` holds for the deployment; otherwise announces the skip by name with `reason`. */
export async function serverWhere(
  suite: string,
  server: RealServer,
  runs: (deployment: MongoDeployment) => boolean,
  reason: string,
  summary: string,
): Promise<RealServer> {
  if (server.kind === 'skipped') {
    console.warn(`@oncely/mongodb: SKIPPED "${suite}": ${server.reason}`);
    return server;
  }
  const known = await withDeployment(server);
  if (known.kind === 'available' && known.deployment && runs(known.deployment)) return known;
  console.warn(`@oncely/mongodb: SKIPPED "${suite}": ${reason}`);
  return { kind: 'skipped', reason, summary };
}

/** Whether transaction suites can run: a real server that is a replica set or a sharded cluster. */
export function transactionServer(suite: string, server: RealServer): Promise<RealServer> {
  return serverWhere(
    suite,
    server,
    (deployment) => deployment.kind !== 'standalone',
    'the server at MONGODB_URL is a standalone; transactions need a replica set (mongod --replSet rs0, then rs.initiate())',
    'standalone server, transactions need a replica set',
  );
}

/** Whether lease-mode suites can run: anything but a mongos, where lease mode is refused. */
export function leaseServer(suite: string, server: RealServer): Promise<RealServer> {
  return serverWhere(
    suite,
    server,
    (deployment) => deployment.kind !== 'sharded',
    'MONGODB_URL is a mongos: lease mode is refused on a sharded cluster (each router judges leases by its own clock); the refusal is tested instead',
    'mongos, lease mode is refused',
  );
}
