import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createPool, dropSchema, uniqueSchema } from './support/database.js';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Inside the workspace, so the examples' imports resolve as they do for a user; ignored by git. */
const runDir = join(packageDir, 'node_modules', '.cache', 'readme-examples');
const admin = createPool({ max: 1 });
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema);
  await admin.end();
});

/** The first ```ts block after `heading` in the README. */
async function example(heading: string): Promise<string> {
  const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
  const from = readme.indexOf(`\n${heading}\n`);
  if (from < 0) throw new Error(`README: no section ${heading}`);
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(from));
  if (!block) throw new Error(`README: no ts block after ${heading}`);
  return block[1]!;
}

/** Runs the block with tsx, as `npx tsx example.mts` would, in a schema of its own instead of `shop`. */
async function run(name: string, code: string): Promise<{ code: number | null; output: string }> {
  const schema = uniqueSchema('readme');
  schemas.push(schema);
  expect(code).toContain("const schema = 'shop';");
  await mkdir(runDir, { recursive: true });
  const file = join(runDir, `${name}.mts`);
  await writeFile(file, code.replace("const schema = 'shop';", `const schema = '${schema}';`));
  const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: packageDir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [exit] = (await once(child, 'exit')) as [number | null];
  return { code: exit, output: output.trim() };
}

describe('README bridge examples, run as written against the shared PostgreSQL', () => {
  it.each([
    ['### Drizzle', 'executed replayed 1'],
    ['### Kysely', 'executed replayed 1'],
    ['### Knex', 'executed replayed 1'],
    ['### Joining a transaction you already opened', 'executed replayed'],
  ])('the %s example prints %s', async (heading, expected) => {
    const { code, output } = await run(heading.replace(/\W+/g, '-'), await example(heading));
    expect(output).toBe(expected);
    expect(code).toBe(0);
  });
});
