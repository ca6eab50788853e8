import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ServiceCommand, serviceCommand } from './service-entry.js';

/** How the child ended. */
export interface ServiceExit {
  readonly pid: number;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** The supervisor's view of the child. */
export type ServiceState =
  | { readonly kind: 'starting' }
  | { readonly kind: 'up'; readonly pid: number; readonly url: string }
  | { readonly kind: 'down'; readonly lastExit: ServiceExit | undefined };

/** Options of {@link superviseService}. */
export interface SuperviseOptions {
  /** The service's flags (see `toServiceArgs`). */
  readonly args: readonly string[];
  /** Flags for the very first start only, such as `--reset`: a restart after a crash must keep the data. */
  readonly firstStartFlags?: readonly string[];
  /** Receives every line the child prints. */
  readonly log?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** How long a start may take (PGlite's first initdb takes a few seconds). */
  readonly startTimeoutMs?: number;
  /** What to run (default: the demo's service, from dist or, in tests, from src through tsx). */
  readonly command?: ServiceCommand;
}

/** A supervised payments service. */
export interface SupervisedService {
  readonly state: ServiceState;
  /** Times the child was started again after dying unexpectedly. */
  readonly restarts: number;
  /** The flags the child runs with now. */
  readonly args: readonly string[];
  /** The base URL once up: waits through a restart in progress. */
  ready(): Promise<string>;
  /** Resolves at the next exit of the running child. */
  nextExit(): Promise<ServiceExit>;
  /** Stops the child gracefully (SIGTERM, SIGKILL after 10 s) and starts it with `args` (default: the same). */
  restart(args?: readonly string[]): Promise<string>;
  /** Stops the child for good. */
  stop(): Promise<void>;
}

/** Tries per start before the supervisor gives up. */
const START_ATTEMPTS = 3;

/** Messages the service sends its supervisor over IPC. */
export interface ListeningMessage {
  readonly type: 'listening';
  readonly port: number;
}

/** Starts the service as a child process and starts it again whenever it dies; resolves once it listens. */
export async function superviseService(options: SuperviseOptions): Promise<SupervisedService> {
  const command = options.command ?? serviceCommand();
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  let args = [...options.args];
  let child: ChildProcess | undefined;
  let state: ServiceState = { kind: 'down', lastExit: undefined };
  let restarts = 0;
  let stopping = false;
  let starting: Promise<string> | undefined;
  let exitWaiters: ((exit: ServiceExit) => void)[] = [];

  let firstStart = true;

  function spawnChild(): Promise<string> {
    state = { kind: 'starting' };
    const recent: string[] = [];
    const flags = firstStart ? [...args, ...(options.firstStartFlags ?? [])] : args;
    const spawned = spawn(process.execPath, [...command.execArgv, command.entry, ...flags], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: process.env,
    });
    child = spawned;
    for (const stream of ['stdout', 'stderr'] as const) {
      createInterface({ input: spawned[stream]! }).on('line', (line) => {
        recent.push(line);
        if (recent.length > 30) recent.shift();
        options.log?.(line, stream);
      });
    }
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        spawned.kill('SIGKILL');
        reject(new Error(`oncely demo: the service did not start within ${startTimeoutMs} ms\n${recent.join('\n')}`));
      }, startTimeoutMs);
      spawned.on('message', (message: ListeningMessage) => {
        if (message?.type !== 'listening') return;
        clearTimeout(timer);
        firstStart = false;
        const url = `http://127.0.0.1:${message.port}`;
        state = { kind: 'up', pid: spawned.pid!, url };
        resolve(url);
      });
      spawned.on('exit', (code, signal) => {
        clearTimeout(timer);
        const exit: ServiceExit = { pid: spawned.pid!, code, signal };
        const wasUp = state.kind === 'up' && state.pid === spawned.pid;
        if (child === spawned) {
          child = undefined;
          state = { kind: 'down', lastExit: exit };
        }
        const waiters = exitWaiters;
        exitWaiters = [];
        for (const wake of waiters) wake(exit);
        if (!wasUp) {
          reject(new Error(`oncely demo: the service exited while starting (${signal ?? code})\n${recent.join('\n')}`));
          return;
        }
        if (!stopping) {
          restarts += 1;
          starting = start();
          starting.catch((error: Error) => options.log?.(error.message, 'stderr'));
        }
      });
    });
  }

  /** Starts the child; a start that fails (the child exits or hangs while starting) is tried twice more. */
  async function start(): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await spawnChild();
      } catch (error) {
        if (attempt >= START_ATTEMPTS || stopping) throw error;
        options.log?.(`${(error as Error).message}\noncely demo: starting the service again (${attempt + 1}/${START_ATTEMPTS})`, 'stderr');
        await sleep(1_000);
      }
    }
  }

  async function terminate(): Promise<void> {
    const running = child;
    if (!running) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGTERM');
    const timer = setTimeout(() => running.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  starting = start();
  await starting;

  return {
    get state() {
      return state;
    },
    get restarts() {
      return restarts;
    },
    get args() {
      return args;
    },
    async ready() {
      for (;;) {
        if (state.kind === 'up') return state.url;
        if (!starting) throw new Error('oncely demo: the service is not running');
        await starting;
      }
    },
    nextExit() {
      return new Promise<ServiceExit>((resolve) => exitWaiters.push(resolve));
    },
    async restart(next = args) {
      stopping = true;
      try {
        await starting?.catch(() => undefined);
        await terminate();
      } finally {
        stopping = false;
      }
      args = [...next];
      starting = start();
      return starting;
    },
    async stop() {
      stopping = true;
      await starting?.catch(() => undefined);
      await terminate();
      starting = undefined;
    },
  };
}
