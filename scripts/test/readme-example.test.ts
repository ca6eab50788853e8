import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readReadmeExample, runExampleProject, writeExampleProject } from '../readme/readme-example.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const example = readReadmeExample(join(root, 'README.md'));

describe('the root README\'s "Use it" example', () => {
  it('installs exactly the packages its code imports, and says what it prints', () => {
    expect([...example.install].sort()).toEqual([...example.imports].sort());
    expect(example.expected.length).toBeGreaterThan(0);
  });

  it('type-checks and runs as written against the workspace packages, as ESM and as CommonJS, printing what its comments say', async () => {
    // A project outside the workspace that resolves packages from its node_modules: the workspace's.
    const dir = mkdtempSync(join(tmpdir(), 'oncely-readme-'));
    try {
      symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
      writeExampleProject(dir, example);
      const { esm, cjs } = await runExampleProject(dir, join(root, 'node_modules', 'typescript', 'bin', 'tsc'));
      expect(esm).toEqual(example.expected);
      expect(cjs).toEqual(example.expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
