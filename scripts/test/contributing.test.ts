import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codeBlocks, driftedBlocks, regions } from '../docs/code-includes.mjs';
import { anchors } from '../docs/links.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const EXAMPLE = 'examples/sqlite-store';
const contributing = readFileSync(join(root, 'CONTRIBUTING.md'), 'utf8');
/** The walkthrough: from its heading to the next heading of its level. */
const walkthrough = /^## Writing a store\n[\s\S]*?(?=^## |(?![\s\S]))/m.exec(contributing)?.[0] ?? '';
const { blocks, unmarked } = codeBlocks(walkthrough);

/** The example's files the walkthrough builds the store from: its sources and its conformance test. */
const storeFiles = [
  ...readdirSync(join(root, EXAMPLE, 'src')).map((file) => `${EXAMPLE}/src/${file}`),
  `${EXAMPLE}/test/conformance.test.ts`,
  `${EXAMPLE}/package.json`,
];

describe('CONTRIBUTING.md, "Writing a store"', () => {
  it('is where ARCHITECTURE.md links to (#writing-a-store), and shows the example store', () => {
    expect(anchors(contributing).has('writing-a-store')).toBe(true);
    expect(readFileSync(join(root, 'ARCHITECTURE.md'), 'utf8')).toContain('](CONTRIBUTING.md#writing-a-store)');
    expect(blocks.length).toBeGreaterThanOrEqual(10);
  });

  it('every code block is a file of the example or a region of one, as the file holds it now', () => {
    // The whole page, so a drift names its line in CONTRIBUTING.md.
    expect(driftedBlocks(root, contributing)).toEqual([]);
  });

  it('every TypeScript or JSON block names the file it shows (commands and output need not)', () => {
    expect(unmarked.filter((block) => !['sh', 'text'].includes(block.lang)).map((block) => `line ${block.line}: ${block.code.split('\n')[0]}`)).toEqual([]);
  });

  it('shows every file the store is built from, whole or region by region', () => {
    const missing = storeFiles.flatMap((file) => {
      const shown = blocks.filter((block) => block.file === file);
      if (shown.some((block) => block.region === undefined)) return [];
      const named = [...regions(readFileSync(join(root, file), 'utf8')).keys()];
      if (named.length === 0) return [`${file}: not shown`];
      return named.filter((name) => !shown.some((block) => block.region === name)).map((name) => `${file}#${name}: not shown`);
    });
    expect(missing).toEqual([]);
  });

  it('a block that drifts from its file is caught, naming the file and the first line that differs', () => {
    const block = blocks.find((candidate) => candidate.region === 'claim' && candidate.file.endsWith('statements.ts'));
    expect(block).toBeDefined();
    const edited = walkthrough.replace('RETURNING fence`,', 'RETURNING *`,');
    expect(edited).not.toBe(walkthrough);
    const drifted = driftedBlocks(root, edited).filter((drift) => drift.includes('statements.ts#claim'));
    expect(drifted).toHaveLength(1);
    expect(drifted[0]).toMatch(/statements\.ts#claim differs from the file at its line \d+: the page says "RETURNING \*`,"/);
    const unknownRegion = walkthrough.replace('statements.ts#claim -->', 'statements.ts#no-such-region -->');
    expect(driftedBlocks(root, unknownRegion)).toContainEqual(expect.stringContaining('has no region no-such-region'));
  });
});
