import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { brokenLinks, outsideReferences, repositoryFiles } from '../docs/links.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const files = repositoryFiles(root);

describe('nothing in the repository refers to a file outside it', () => {
  it('lists the repository (every file git tracks or would track)', () => {
    expect(files).toEqual(expect.arrayContaining(['ARCHITECTURE.md', 'CONTRIBUTING.md', 'package.json', 'scripts/docs/links.mjs']));
    expect(files.some((file) => file.includes('node_modules/'))).toBe(false);
  });

  it('no file names the design document that was never in it, or a folder of the machine it was written on', () => {
    expect(outsideReferences(root, files)).toEqual([]);
  });

  it('every relative Markdown link stays inside the repository and reaches a file, and a heading, that exist', () => {
    expect(brokenLinks(root, files)).toEqual([]);
  });

  it('both checks find what they look for (a layout of their own)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oncely-inside-'));
    try {
      mkdirSync(join(dir, 'docs'));
      // Spelled in parts, so this file is not a hit of its own check.
      const design = ['DESIGN', 'md'].join('.');
      const machine = ['', 'work', 'main'].join('/');
      const shared = ['..', 'shared', 'notes'].join('/');
      const pages: Record<string, string> = {
        'README.md': `# Top\n\n## Writing a store\n\nSee [design](${design}#7) and [b](docs/b.md#usage).\n`,
        'docs/b.md': '# B\n\n## Usage\n\n[up](../README.md#writing-a-store) [out](../../elsewhere.md) [gone](missing.md) [no heading](../README.md#nope) [web](https://example.org)\n',
        'notes.txt': `copied from ${machine} and ${shared}\n`,
        'image.png': `\u0000${machine} inside a binary file\n`,
      };
      for (const [file, text] of Object.entries(pages)) writeFileSync(join(dir, file), text);
      expect(outsideReferences(dir, Object.keys(pages))).toEqual([
        `README.md:5: See [design](${design}#7) and [b](docs/b.md#usage).`,
        `notes.txt:1: copied from ${machine} and ${shared}`,
      ]);
      expect(brokenLinks(dir, Object.keys(pages))).toEqual([
        `README.md: ${design}#7: no such file`,
        'docs/b.md: ../../elsewhere.md: leaves the repository',
        'docs/b.md: missing.md: no such file',
        'docs/b.md: ../README.md#nope: README.md has no heading #nope',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
