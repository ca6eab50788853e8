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

async function untilReady(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server on ${port} exited: ${output()}`);
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch {
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
  const port = await freePort();
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
  await launch();
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
