import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { type PrivateServer, startPrivateServer } from './private-server.js';

const run = promisify(execFile);

/** A three-master Redis Cluster on private loopback ports, started and stopped by the test. */
export interface PrivateCluster {
  readonly servers: readonly PrivateServer[];
  /** A new ioredis Cluster client; the caller quits it. */
  connect(options?: { enableAutoPipelining?: boolean }): Cluster;
  /** The ports of the master serving `key` and of its replica (if any), as the cluster says. */
  placement(key: string): Promise<{ readonly master: number; readonly replica: number | undefined }>;
  dispose(): Promise<void>;
}

const node = (port: number) => new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0 });

/**
 * Waits until every node says `cluster_state:ok`, knows every replica as one (gossip takes a moment),
 * and every master sees its replicas online.
 */
async function untilClusterOk(ports: readonly number[], replicasPerMaster: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ready = await Promise.all(
      ports.map(async (port) => {
        const connection = node(port);
        try {
          if (!/cluster_state:ok/.test(await connection.cluster('INFO'))) return false;
          const nodes = (await connection.cluster('NODES')) as string;
          if ((nodes.match(/ (myself,)?slave /g) ?? []).length !== 3 * replicasPerMaster) return false;
          const replication = await connection.info('replication');
          if (!/role:master/.test(replication)) return true;
          return (replication.match(/state=online/g) ?? []).length === replicasPerMaster;
        } finally {
          connection.disconnect();
        }
      }),
    );
    if (ready.every(Boolean)) return;
    if (Date.now() > deadline) throw new Error('the private cluster did not become ready');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Starts three masters (and `replicasPerMaster` replicas each) with `--cluster-enabled yes` and joins
 * them with `redis-cli --cluster create`.
 */
export async function startPrivateCluster(replicasPerMaster: 0 | 1 = 0): Promise<PrivateCluster> {
  const servers: PrivateServer[] = [];
  try {
    for (let i = 0; i < 3 * (1 + replicasPerMaster); i++) {
      servers.push(
        await startPrivateServer(['--cluster-enabled', 'yes', '--cluster-node-timeout', '5000', '--repl-diskless-sync-delay', '0']),
      );
    }
    const addresses = servers.map((server) => `127.0.0.1:${server.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicasPerMaster), '--cluster-yes']);
    await untilClusterOk(servers.map((server) => server.port), replicasPerMaster);
  } catch (error) {
    await Promise.all(servers.map((server) => server.dispose()));
    throw error;
  }
  return {
    servers,
    connect: (options = {}) =>
      new Cluster(
        servers.map((server) => ({ host: '127.0.0.1', port: server.port })),
        { enableAutoPipelining: options.enableAutoPipelining ?? false },
      ),
    async placement(key) {
      const connection = node(servers[0]!.port);
      try {
        const slot = (await connection.cluster('KEYSLOT', key)) as number;
        // CLUSTER NODES, not SLOTS: SLOTS hides replicas until their replication offset moves.
        const lines = ((await connection.cluster('NODES')) as string).trim().split('\n').map((line) => line.split(' '));
        const portOf = (fields: string[]) => Number(fields[1]!.split('@')[0]!.split(':')[1]);
        const serves = (fields: string[]) =>
          fields.slice(8).some((range) => {
            const [start, end = start] = range.split('-').map(Number);
            return start! <= slot && slot <= end!;
          });
        const master = lines.find((fields) => fields[2]!.includes('master') && serves(fields))!;
        const replica = lines.find((fields) => fields[3] === master[0]);
        return { master: portOf(master), replica: replica && portOf(replica) };
      } finally {
        connection.disconnect();
      }
    },
    async dispose() {
      await Promise.all(servers.map((server) => server.dispose()));
    },
  };
}
