import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { listenablePort, PRIVATE_PORTS } from '@oncely/test-support';

const run = promisify(execFile);

/** Ports reserved for this package's private servers; `ONCELY_PRIVATE_PG_PORT=28000` moves the eight elsewhere. */
const FIRST_PORT = Number(process.env.ONCELY_PRIVATE_PG_PORT ?? PRIVATE_PORTS.postgres);

/** A PostgreSQL cluster of our own under /tmp, so a test may crash and restart it. */
export interface PrivatePostgres {
  readonly url: string;
  start(): Promise<void>;
  /** `immediate` is a crash: no checkpoint, clients cut off, recovery on the next start. */
  stop(mode: 'immediate' | 'fast'): Promise<void>;
  /** Stops the server if it runs and deletes its files. */
  dispose(): Promise<void>;
}

/**
 * initdb, then starts a server on the first listenable port of 31432-31439 (or of the eight from `ONCELY_PRIVATE_PG_PORT`). The server binaries come
 * from `pg_config --bindir` (Debian's postgresql package); as root they run as the `postgres` user,
 * since PostgreSQL refuses to run as root.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = (await run('pg_config', ['--bindir'])).stdout.trim();
  const port = await listenablePort(FIRST_PORT, 8);
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'oncely-pg-'));
  if (root) {
    const [uid, gid] = await Promise.all(['-u', '-g'].map(async (flag) => Number((await run('id', [flag, 'postgres'])).stdout)));
    chownSync(dir, uid!, gid!);
  }
  const server = (tool: string, args: string[]) =>
    root ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), args);
  const data = join(dir, 'data');
  await server('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  let running = false;
  const cluster: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      await server('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', 'start']);
      running = true;
    },
    async stop(mode) {
      await server('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
      running = false;
    },
    async dispose() {
      if (running) await cluster.stop('immediate');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await cluster.start();
  return cluster;
}
