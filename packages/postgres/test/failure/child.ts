import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RunResult } from '@oncely/core';
import { DATABASE_URL } from '../support/database.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/charge-client.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

/** The drivers the fixture can run on. */
export type Driver = 'pg' | 'postgres.js';
export const DRIVERS: readonly Driver[] = ['pg', 'postgres.js'];

/** What a fixture process is told to do. */
export interface ClientConfig {
  readonly schema: string;
  readonly account: string;
  readonly key: string;
  readonly amount: number;
  readonly mode?: 'transaction' | 'lease';
  /** The driver the process gives oncely (default `pg`). */
  readonly driver?: Driver;
  /** Concurrent callers in the process, each running the same request. */
  readonly callers?: number;
  /** Rounds of callers, one after another, each reported as `round-<n>`. */
  readonly rounds?: number;
  /** Named point where the handler stops and waits for `resume` (or a SIGKILL). */
  readonly pauseAt?: 'business-written' | 'lease-claimed';
  readonly waitForGo?: boolean;
  readonly retryInProgress?: boolean;
  readonly leaseMs?: number;
  readonly retentionMs?: number;
  readonly applicationName?: string;
  readonly poolSize?: number;
}

/** A caller's outcome as the fixture reports it. */
export type CallerResult = RunResult<{ chargeId: string; amount: number }> | { kind: 'error'; code: string; message: string };

interface Message {
  readonly point: string;
  readonly pid?: number;
  readonly results?: CallerResult[];
}

/** A fixture process and the named points it reports. */
export interface Client {
  readonly process: ChildProcess;
  /** Resolves with the message of `point`; rejects if the process exits first. */
  point(point: string): Promise<Message>;
  send(message: 'go' | 'resume'): void;
  /** SIGKILL: no handler, no cleanup, the socket closes under PostgreSQL's feet. */
  kill(): Promise<void>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Fails loudly when the build the fixtures import is missing: the suite never skips. */
export function assertBuilt(): void {
  if (!existsSync(DIST)) {
    throw new Error('dist/ is missing: run `npx turbo run build --filter=@oncely/postgres...` before these tests');
  }
}

/** Starts a payments client process with `config`. */
export function startClient(config: ClientConfig): Client {
  const child = fork(
    FIXTURE,
    [
      JSON.stringify({
        databaseUrl: DATABASE_URL,
        mode: 'transaction',
        callers: 1,
        rounds: 1,
        poolSize: 5,
        leaseMs: 30_000,
        retentionMs: 86_400_000,
        ...config,
      }),
    ],
    { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const received: Message[] = [];
  const listeners = new Set<() => void>();
  child.on('message', (message: Message) => {
    received.push(message);
    for (const listener of listeners) listener();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
      for (const listener of listeners) listener();
    }),
  );
  return {
    process: child,
    exited,
    point(point) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = received.find((message) => message.point === point);
          if (found) {
            listeners.delete(check);
            resolve(found);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            listeners.delete(check);
            reject(new Error(`the client exited (${child.exitCode ?? child.signalCode}) before reaching ${point}`));
          }
        };
        listeners.add(check);
        check();
      });
    },
    send(message) {
      child.send(message);
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Runs a client to completion and returns each round's results. */
export async function runClient(config: ClientConfig): Promise<CallerResult[][]> {
  const client = startClient(config);
  const rounds: CallerResult[][] = [];
  for (let round = 1; round <= (config.rounds ?? 1); round++) rounds.push((await client.point(`round-${round}`)).results ?? []);
  await client.exited;
  return rounds;
}

/** Runs a one-caller, one-round client and returns its outcome. */
export async function runOnce(config: ClientConfig): Promise<CallerResult | undefined> {
  return (await runClient(config))[0]?.[0];
}
