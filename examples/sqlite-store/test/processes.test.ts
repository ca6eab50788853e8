import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { uniqueKey } from '@oncely/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'oncely-sqlite-processes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const claimer = fileURLToPath(new URL('./support/claimer.ts', import.meta.url));
const PROCESSES = 4;
const KEYS = 150;

/** Resolves each line the child prints, in turn. */
function lines(child: ChildProcess): () => Promise<string> {
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let end = buffer.indexOf('\n'); end !== -1; end = buffer.indexOf('\n')) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      const next = waiting.shift();
      if (next) next(line);
      else queue.push(line);
    }
  });
  return () => {
    const line = queue.shift();
    return line === undefined ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve(line);
  };
}

describe('sqlite store: processes on one database file', () => {
  it(`${PROCESSES} processes claiming the same ${KEYS} keys at once: each key is claimed by exactly one`, async () => {
    const filename = join(dir, 'shared.db');
    await sqliteStore({ filename }).close();
    const prefix = uniqueKey('processes');
    const children = Array.from({ length: PROCESSES }, () =>
      spawn(process.execPath, ['--import', 'tsx', claimer, filename, prefix, String(KEYS)], { stdio: ['pipe', 'pipe', 'inherit'] }),
    );
    try {
      const next = children.map(lines);
      // Every process has its store open before any claims: then all start together.
      expect(await Promise.all(next.map((line) => line()))).toEqual(children.map(() => 'ready'));
      for (const child of children) child.stdin.write('go\n');
      const won = (await Promise.all(next.map((line) => line()))).map((line) => JSON.parse(line) as string[]);
      const claims = won.flat();
      expect(claims.length, `${claims.length} claims of ${KEYS} keys (per process: ${won.map((keys) => keys.length).join(', ')})`).toBe(KEYS);
      expect(new Set(claims).size).toBe(KEYS);
    } finally {
      for (const child of children) child.kill('SIGKILL');
    }
  }, 60_000);
});
