import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createPool, DATABASE_URL, dropSchema, uniqueSchema } from '../support/database.js';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Inside the workspace, so the example's imports resolve as they do for a user; ignored by git. */
const runDir = join(packageDir, 'node_modules', '.cache', 'readme-examples');
const pool = createPool({ max: 1 });
const schema = uniqueSchema('readme_pgjs');

afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
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

describe('the README', () => {
  it('postgres.js example: runs as written (in a schema of its own) and prints what its comments say', async () => {
    const code = await example('## postgres.js');
    // The example's schema, renamed so the run writes only in its own.
    const own = code.replaceAll("'shop'", `'${schema}'`).replaceAll('shop.', `${schema}.`);
    expect(own).not.toContain('shop');
    await mkdir(runDir, { recursive: true });
    const file = join(runDir, 'postgresjs.mts');
    await writeFile(file, own);
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: packageDir,
      env: { ...process.env, DATABASE_URL },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [exitCode] = await once(child, 'exit');
    const promised = [...code.matchAll(/console\.log\(.*\); \/\/ (\w+)/g)].map((match) => match[1]);
    expect(promised).toEqual(['executed', 'replayed']);
    expect({ exitCode, lines: output.trim().split('\n') }).toEqual({ exitCode: 0, lines: promised });
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".payments`);
    expect(rows[0].n).toBe(1);
  });
});
