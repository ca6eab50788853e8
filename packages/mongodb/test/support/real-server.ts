import * as driver7 from 'mongodb';
import * as driver6 from 'mongodb6';

/** Why a real-server suite did not run. */
export const SKIP_REASON =
  'MONGODB_URL is not set, and no MongoDB server can be installed on this machine (DESIGN.md §9). ' +
  'Run: MONGODB_URL=mongodb://localhost:27017/?replicaSet=rs0 npm test -w @oncely/mongodb';

/** Whether a real-server suite runs in this process. */
export type RealServer =
  | { readonly kind: 'available'; readonly url: string }
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

/**
 * Whether transaction suites can run: a real server that is a replica set or a sharded cluster.
 * Asks the server once (top-level await at collection time) and announces a skip by name.
 */
export async function transactionServer(suite: string, server: RealServer): Promise<RealServer> {
  if (server.kind === 'skipped') {
    console.warn(`@oncely/mongodb: SKIPPED "${suite}": ${server.reason}`);
    return server;
  }
  const client = new driver7.MongoClient(server.url);
  try {
    const hello = await client.db('admin').command({ hello: 1 });
    if (typeof hello.setName === 'string' || hello.msg === 'isdbgrid') return server;
  } finally {
    await client.close();
  }
  const reason = 'the server at MONGODB_URL is a standalone; transactions need a replica set (mongod --replSet rs0, then rs.initiate())';
  console.warn(`@oncely/mongodb: SKIPPED "${suite}": ${reason}`);
  return { kind: 'skipped', reason, summary: 'standalone server, transactions need a replica set' };
}
