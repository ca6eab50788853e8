import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { postgresJournal } from '@oncely/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, type PaymentsServer, startPaymentsServer, unquote } from './support/payments-server.js';

const CALLER = fileURLToPath(new URL('./support/resuming-caller.mjs', import.meta.url));

/** Starts the calling process and hands back its JSON lines as they arrive. */
function startCaller(env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [CALLER], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: { test: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  createInterface({ input: child.stdout! }).on('line', (text) => {
    const line = JSON.parse(text) as Record<string, unknown>;
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.test(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    lines,
    exited,
    stderr: () => stderr,
    /** Resolves with the first line (seen or to come) that passes `test`; fails if the process exits first. */
    waitFor(test: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
      const seen = lines.find(test);
      if (seen) return Promise.resolve(seen);
      return Promise.race([
        new Promise<Record<string, unknown>>((resolve) => waiters.push({ test, resolve })),
        exited.then(({ code }) => {
          throw new Error(`caller exited (${code}) before the expected line: ${stderr}`);
        }),
      ]);
    },
  };
}

let server: PaymentsServer;
beforeAll(async () => {
  server = await startPaymentsServer('sigkill');
});
afterAll(() => server.close());

describe('a calling process SIGKILLed between attempts', () => {
  it('is resumed by a new process with the same key, and the charge happens exactly once', async () => {
    const env = {
      TARGET_URL: server.url,
      DATABASE_URL,
      JOURNAL_SCHEMA: server.schema,
      OPERATION_ID: `order-42-${Date.now().toString(36)}:charge`,
    };
    // The first attempt commits the charge and loses its response.
    server.faults.push({ kind: 'drop' });

    const first = startCaller(env);
    const sleeping = await first.waitFor((line) => line.event === 'sleep');
    expect(sleeping).toMatchObject({ attempt: 1, reason: 'connection_reset' });
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(first.lines.some((line) => 'outcome' in line)).toBe(false);

    const journal = postgresJournal({ db: server.pool, schema: server.schema });
    const crashed = await journal.get(env.OPERATION_ID);
    expect(crashed).toMatchObject({ state: 'pending', attempts: 1 });
    const key = crashed!.key;
    expect(server.seenKeys.map(unquote)).toEqual([key]);
    expect(await server.charges()).toBe(1);

    const second = startCaller(env);
    const result = await second.waitFor((line) => 'outcome' in line);
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(result).toMatchObject({ outcome: 'succeeded', status: 201, replayed: 'true', key, body: { amount: 25 } });
    expect(second.lines.filter((line) => line.event === 'attempt')).toHaveLength(1);

    expect(server.seenKeys.map(unquote)).toEqual([key, key]);
    expect(await server.charges()).toBe(1);
    expect(await journal.get(env.OPERATION_ID)).toMatchObject({ state: 'succeeded', attempts: 2 });
  });
});
