import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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

/** The two scripts a package's `test/processes` folder holds. */
export type ProcessScript = 'relay-process.mjs' | 'consumer-process.mjs';

/** Where a package's process scripts are, and the builds they import. */
export interface ProcessControlOptions {
  /** The folder of `relay-process.mjs` and `consumer-process.mjs`, e.g. `new URL('../processes/', import.meta.url)`. */
  readonly processes: URL;
  /** The built entry points the scripts import (the package's own `dist/index.js` among them). */
  readonly builds: readonly URL[];
  /** The package whose build `assertBuilt` asks for, e.g. `@oncely/nats`. */
  readonly packageName: string;
}

/**
 * Forks `script` with `config` as its one argument, and follows the points it reports. `execArgv`
 * are Node's own flags for the child (`['--import', 'tsx']` for a TypeScript script).
 */
export function startProcess(script: URL, config: Record<string, unknown>, execArgv: readonly string[] = []): Process {
  const child = fork(fileURLToPath(script), [JSON.stringify(config)], {
    execArgv: [...execArgv],
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

/**
 * A package's process control: `assertBuilt` fails loudly when a build its scripts import is
 * missing (the suites never skip), `startProcess` forks one of its two scripts, `killStarted`
 * SIGKILLs what is still running.
 */
export function processControl({ processes, builds, packageName }: ProcessControlOptions) {
  // The scripts import this package's `processes` entry: its build is one of theirs.
  const all = [...builds, new URL('./processes.js', import.meta.url)].map((url) => fileURLToPath(url));
  const started = new Set<Process>();
  return {
    assertBuilt(): void {
      const missing = all.filter((path) => !existsSync(path));
      if (missing.length > 0) {
        throw new Error(`missing builds (${missing.join(', ')}): run \`npx turbo run build --filter=${packageName}...\` first`);
      }
    },
    startProcess(script: ProcessScript, config: Record<string, unknown>): Process {
      const child = startProcess(new URL(script, processes), config);
      started.add(child);
      void child.exited.then(() => started.delete(child));
      return child;
    },
    /** SIGKILLs every process started here that is still running: for `afterEach`. */
    killStarted: () => Promise.all([...started].map((child) => child.kill())).then(() => undefined),
  };
}
