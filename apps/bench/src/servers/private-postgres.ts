import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A PostgreSQL cluster of the bench's own (initdb in a temp dir), so the recovery suite may restart it. */
export interface BenchPostgres {
  readonly url: string;
  /** `pg_ctl restart -m <mode> -w`: resolves once the server accepts connections again. */
  restart(mode: 'fast' | 'immediate'): Promise<void>;
  stop(): Promise<void>;
}

/** initdb and start on `port`; as root its tools run as the `postgres` user (PostgreSQL refuses root). */
export async function startBenchPostgres(port: number): Promise<BenchPostgres> {
  const bin = (await run('pg_config', ['--bindir'])).stdout.trim();
  const dir = mkdtempSync(join(tmpdir(), 'oncely-bench-pg-'));
  const root = process.getuid?.() === 0;
  if (root) {
    const [uid, gid] = await Promise.all(['-u', '-g'].map(async (flag) => Number((await run('id', [flag, 'postgres'])).stdout)));
    chownSync(dir, uid!, gid!);
  }
  const tool = (name: string, args: string[]) => (root ? run('runuser', ['-u', 'postgres', '--', join(bin, name), ...args]) : run(join(bin, name), args));
  const data = join(dir, 'data');
  await tool('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const log = join(dir, 'server.log');
  await tool('pg_ctl', ['-D', data, '-l', log, '-o', options, '-w', 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart(mode) {
      await tool('pg_ctl', ['-D', data, '-l', log, '-o', options, '-m', mode, '-w', 'restart']);
    },
    async stop() {
      await tool('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
