import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, returnPort } from './ports.js';

/** A redis-server this test run started on a private loopback port, never the shared one. */
export interface PrivateServer {
  readonly port: number;
  readonly url: string;
  /** Working directory (AOF and cluster files live here). */
  readonly dir: string;
  /** Stops the server: SIGKILL is a crash, SIGTERM a clean shutdown. Resolves once it exited. */
  stop(signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Starts it again on the same port and directory, with the same settings. */
  restart(): Promise<void>;
  /** Freezes the process (SIGSTOP): it keeps its connections but answers nothing until resumed. */
  pause(): void;
  /** Resumes a paused process (SIGCONT). */
  resume(): void;
  /** Stops it for good and removes its directory. */
  dispose(): Promise<void>;
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

/** The port was free when checked, but another process's redis-server bound it first. */
class PortTaken extends Error {
  constructor(readonly port: number) {
    super(`port ${port} was taken by another redis-server`);
  }
}

async function untilReady(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) {
      if (output().includes('Address already in use')) throw new PortTaken(port);
      throw new Error(`redis-server on ${port} exited: ${output()}`);
    }
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      // Another test process may have started its own server on this port first: only ours counts.
      const info = String(await probe.info('server'));
      if (new RegExp(`^process_id:${child.pid}\\s*$`, 'm').test(info)) return;
      if (info.includes('process_id:')) throw new PortTaken(port);
    } catch (error) {
      if (error instanceof PortTaken) throw error;
      // Not listening yet.
    } finally {
      probe.disconnect();
    }
    if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not start: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts `redis-server` on a free private port with `settings` (e.g. `['--appendonly', 'yes']`).
 * Persistence is off unless the settings turn it on.
 */
export async function startPrivateServer(settings: readonly string[] = []): Promise<PrivateServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await startOn(port, settings);
    } catch (error) {
      // Kept as taken for this process: the other process's server holds it.
      if (!(error instanceof PortTaken) || attempt >= 10) throw error;
    }
  }
}

async function startOn(port: number, settings: readonly string[]): Promise<PrivateServer> {
  const dir = mkdtempSync(join(tmpdir(), `oncely-redis-${port}-`));
  let child: ChildProcess;
  const launch = async () => {
    let output = '';
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', ...settings],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (chunk) => (output = (output + chunk).slice(-4_000)));
    child.stderr?.on('data', (chunk) => (output = (output + chunk).slice(-4_000)));
    await untilReady(port, child, () => output);
  };
  try {
    await launch();
  } catch (error) {
    child!.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  // Even if the test process dies early, its servers do not outlive it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async (signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL') => {
    const running = exited(child);
    child.kill(signal);
    await running;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    stop,
    restart: launch,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    async dispose() {
      process.off('exit', killOnExit);
      child.kill('SIGCONT');
      await stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      returnPort(port);
    },
  };
}
