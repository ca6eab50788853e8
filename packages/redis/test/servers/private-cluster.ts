import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { type PrivateServer, startPrivateServer } from './private-server.js';

const run = promisify(execFile);

/** A three-master Redis Cluster on private loopback ports, started and stopped by the test. */
export interface PrivateCluster {
  readonly ports: readonly number[];
  /** A new ioredis Cluster client; the caller quits it. */
  connect(options?: { enableAutoPipelining?: boolean }): Cluster;
  dispose(): Promise<void>;
}

async function untilClusterOk(ports: readonly number[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const states = await Promise.all(
      ports.map(async (port) => {
        const node = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0 });
        try {
          return /cluster_state:ok/.test(await node.cluster('INFO'));
        } finally {
          node.disconnect();
        }
      }),
    );
    if (states.every(Boolean)) return;
    if (Date.now() > deadline) throw new Error('the private cluster did not reach cluster_state:ok');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts three `redis-server --cluster-enabled yes` nodes and joins them with `redis-cli --cluster create`. */
export async function startPrivateCluster(): Promise<PrivateCluster> {
  const servers: PrivateServer[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      servers.push(await startPrivateServer(['--cluster-enabled', 'yes', '--cluster-node-timeout', '5000']));
    }
    const addresses = servers.map((server) => `127.0.0.1:${server.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
    await untilClusterOk(servers.map((server) => server.port));
  } catch (error) {
    await Promise.all(servers.map((server) => server.dispose()));
    throw error;
  }
  return {
    ports: servers.map((server) => server.port),
    connect: (options = {}) =>
      new Cluster(
        servers.map((server) => ({ host: '127.0.0.1', port: server.port })),
        { enableAutoPipelining: options.enableAutoPipelining ?? false },
      ),
    async dispose() {
      await Promise.all(servers.map((server) => server.dispose()));
    },
  };
}
