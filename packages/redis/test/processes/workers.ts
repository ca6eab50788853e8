import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./idempotency-worker.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

/** Settings of one worker process (see idempotency-worker.mjs). */
export interface WorkerSettings {
  readonly REDIS_URL: string;
  readonly PREFIX: string;
  readonly KEY: string;
  readonly COUNTER: string;
  readonly MODE: 'race' | 'hold';
  readonly ATTEMPTS?: string;
  readonly LEASE_MS?: string;
  readonly HOLD_MS?: string;
}

/** A message a worker sent. */
export type WorkerMessage = { readonly type: string } & Record<string, unknown>;

/** A running worker process and the messages it sent, in order. */
export interface Worker {
  readonly child: ChildProcess;
  /** Resolves with the next (or an already received, not yet taken) message of `type`. */
  next(type: string): Promise<WorkerMessage>;
  /** Resolves once the process exited, with its signal if it was killed. */
  readonly exited: Promise<NodeJS.Signals | null>;
}

/** Forks a worker on the built package (run `npx turbo run build --filter=@oncely/redis...` first). */
export function startWorker(settings: WorkerSettings): Worker {
  if (!existsSync(DIST)) throw new Error(`build the package first: ${DIST} is missing`);
  const child = fork(WORKER, [], { env: { ...process.env, ...settings }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const inbox: WorkerMessage[] = [];
  const waiting: { type: string; resolve: (message: WorkerMessage) => void }[] = [];
  child.on('message', (message: WorkerMessage) => {
    const index = waiting.findIndex((w) => w.type === message.type);
    if (index >= 0) waiting.splice(index, 1)[0]!.resolve(message);
    else inbox.push(message);
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  return {
    child,
    exited,
    next(type) {
      const index = inbox.findIndex((message) => message.type === type);
      if (index >= 0) return Promise.resolve(inbox.splice(index, 1)[0]!);
      return new Promise((resolve, reject) => {
        waiting.push({ type, resolve });
        exited.then(() => reject(new Error(`worker ${child.pid} exited before sending "${type}"`)));
      });
    },
  };
}
