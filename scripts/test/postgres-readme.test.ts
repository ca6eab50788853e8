import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codeBlocks, driftedBlocks } from '../docs/code-includes.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(join(root, 'packages/postgres/README.md'), 'utf8');

describe('packages/postgres/README.md, the ORM bridge examples', () => {
  it('shows each ORM example from the test file that runs it (test/bridges/examples)', () => {
    const shown = codeBlocks(readme).blocks.map((block) => `${block.file}#${block.region}`);
    for (const orm of ['typeorm', 'mikro-orm', 'prisma', 'prisma-held']) {
      expect(shown).toContain(`packages/postgres/test/bridges/examples/${orm}.example.test.ts#${orm}`);
    }
  });

  it('every marked block is its region as the file holds it now', () => {
    expect(driftedBlocks(root, readme)).toEqual([]);
  });
});
