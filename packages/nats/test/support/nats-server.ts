import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { listenablePort, PRIVATE_PORTS, reachable, reachableAs } from '@oncely/test-support';

/** The shared NATS server (JetStream on): never restarted; tests use streams of their own. */
export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** Whether the shared server is there; suites that need it skip, saying so in their title, when it is not. */
export const natsUp = await reachable(NATS_URL);
export const suiteTitle = (title: string) => (natsUp ? title : `${title} (skipped: NATS unreachable at ${NATS_URL})`);

/** A name no other run uses, for streams, subjects and durables. */
export const uniqueName = (label: string) => `oncely_${label}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 7)}`;

/**
 * A client that reconnects forever. `timeout` bounds each connection attempt: a reconnect whose
 * socket is reset mid-handshake otherwise waits out the default 20 s before trying again (seen in
 * the connection storm: every pull and publish stalled that long after the storm).
 */
export const connectNats = (url = NATS_URL) => connect({ servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 100, timeout: 2_000 });

/**
 * A private nats-server with JetStream on the first listenable port of this package's range
 * (31300–31349), storing in a temporary folder that outlives restarts:
 * for tests that SIGKILL or restart the broker.
 */
export async function privateNatsServer() {
  const port = await listenablePort(PRIVATE_PORTS.nats, 50);
  const storeDir = mkdtempSync(join(tmpdir(), 'oncely-nats-'));
  let child: ChildProcess | undefined;
  const url = `nats://127.0.0.1:${port}`;
  async function start() {
    child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
    await reachableAs(url, true, 15_000);
  }
  async function kill() {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  }
  await start();
  return {
    url,
    port,
    /** SIGKILL, then start again on the same store: what survives is what JetStream had synced. */
    async restart() {
      await kill();
      await start();
    },
    async stop() {
      await kill();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
