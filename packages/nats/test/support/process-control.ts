import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BUILDS = ['../../dist/index.js', '../../../postgres/dist/index.js', '../../../core/dist/index.js'].map((path) =>
  fileURLToPath(new URL(path, import.meta.url)),
);

/** A message a process sent at a named point. */
export interface PointMessage {
  readonly point: string;
  readonly eventId?: string;
  readonly eventIds?: readonly string[];
}

/** A relay or consumer process and the named points it reports. */
export interface Process {
  readonly child: ChildProcess;
  /** Resolves with the next message of `point` not yet taken; rejects if the process exits first. */
  point(point: string): Promise<PointMessage>;
  /** Every message of `point` received so far. */
  received(point: string): readonly PointMessage[];
  /** SIGKILL: no handler runs, connections drop under the servers' feet. */
  kill(): Promise<void>;
  /** Asks for a graceful stop and waits for the exit. */
  stop(): Promise<void>;
  readonly exited: Promise<NodeJS.Signals | null>;
}

/** Fails loudly when a build the processes import is missing: the suite never skips. */
export function assertBuilt(): void {
  const missing = BUILDS.filter((path) => !existsSync(path));
  if (missing.length > 0) {
    throw new Error(`missing builds (${missing.join(', ')}): run \`npx turbo run build --filter=@oncely/nats...\` first`);
  }
}

/** Forks `processes/<script>` with `config` as its one argument. */
export function startProcess(script: 'relay-process.mjs' | 'consumer-process.mjs', config: Record<string, unknown>): Process {
  const child = fork(fileURLToPath(new URL(`../processes/${script}`, import.meta.url)), [JSON.stringify(config)], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const messages: PointMessage[] = [];
  const taken = new Set<PointMessage>();
  const listeners = new Set<() => void>();
  child.on('message', (message: PointMessage) => {
    messages.push(message);
    for (const listener of listeners) listener();
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  let gone = false;
  void exited.then(() => {
    gone = true;
    for (const listener of listeners) listener();
  });
  return {
    child,
    exited,
    received: (point) => messages.filter((message) => message.point === point),
    point(point) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const message = messages.find((m) => m.point === point && !taken.has(m));
          if (message) {
            taken.add(message);
            listeners.delete(check);
            resolve(message);
          } else if (gone) {
            listeners.delete(check);
            reject(new Error(`process ${child.pid} exited before reaching "${point}"`));
          }
        };
        listeners.add(check);
        check();
      });
    },
    async kill() {
      if (!gone) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!gone) child.send('stop');
      await exited;
    },
  };
}
