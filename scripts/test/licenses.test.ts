import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { packedFiles, publishedPackages } from '../packages/published-packages.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const license = readFileSync(join(root, 'LICENSE'), 'utf8');
const packages = publishedPackages(root);

describe('LICENSE', () => {
  it('the root LICENSE is the MIT license of the oncely contributors, as package.json says', () => {
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} oncely contributors\n/);
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).license).toBe('MIT');
    expect(packages.map((pkg) => pkg.name)).toEqual(expect.arrayContaining(['@oncely/core', '@oncely/http', '@oncely/postgres']));
  });

  it.each(packages.map((pkg) => [pkg.name, pkg] as const))('%s says MIT and its LICENSE is the root one, byte for byte', (_, pkg) => {
    expect(pkg.manifest.license).toBe('MIT');
    const copy = readFileSync(join(root, pkg.dir, 'LICENSE'), 'utf8');
    expect(copy === license, `${pkg.dir}/LICENSE differs from the root LICENSE: run cp LICENSE ${pkg.dir}/LICENSE`).toBe(true);
  });

  it.each(packages.map((pkg) => [pkg.name, pkg] as const))('%s: npm pack puts LICENSE in the tarball', async (_, pkg) => {
    expect(await packedFiles(join(root, pkg.dir))).toContain('LICENSE');
  });
});
