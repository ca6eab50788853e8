import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Inside the workspace, so the examples' imports resolve as they do for a user; ignored by git. */
const runDir = join(packageDir, 'node_modules', '.cache', 'readme-examples');

/** The first ```ts block after `heading` in the README (the file's first block for an empty heading). */
async function example(heading: string): Promise<string> {
  const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
  const from = heading === '' ? 0 : readme.indexOf(`\n${heading}\n`);
  if (from < 0) throw new Error(`README: no section ${heading}`);
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(from));
  if (!block) throw new Error(`README: no ts block after ${heading}`);
  return block[1]!;
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  }
});

/** Writes the block to a module and runs it with tsx, as `npx tsx example.mts` would. */
async function run(name: string, code: string): Promise<{ child: ChildProcess; output: () => string }> {
  await mkdir(runDir, { recursive: true });
  const file = join(runDir, `${name}.mts`);
  await writeFile(file, code);
  const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: packageDir, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { child, output: () => text };
}

async function untilListening(url: string, output: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await fetch(url);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`the example never listened: ${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe('README examples, run as written', () => {
  it('the fetch example prints 201 201 true 1', async () => {
    const { child, output } = await run('fetch', await example(''));
    const [code] = (await once(child, 'exit')) as [number];
    expect(output().trim()).toBe('201 201 true 1');
    expect(code).toBe(0);
  });

  it.each(['### Express', '### Fastify', '### Hono'])('the %s example serves a POST once and replays its retry', async (heading) => {
    const port = await freePort();
    const code = (await example(heading)).replaceAll('3000', String(port));
    const { output } = await run(heading.slice(4).toLowerCase(), code);
    const url = `http://localhost:${port}/payments`;
    await untilListening(url, output);
    const post = () =>
      fetch(url, { method: 'POST', headers: { 'idempotency-key': '"k1"', 'content-type': 'application/json' }, body: '{"amount":10}' });
    const first = await post();
    const retry = await post();
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(await first.json());
    expect(first.headers.get('location') ?? '/payments/pay_1').toBe('/payments/pay_1');
  });
});
