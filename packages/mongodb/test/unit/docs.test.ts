import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// The package's documentation says only what has been shown, and stands on its own.

const packageDir = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
const files = (folder: string): string[] =>
  readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });

describe('the package documentation', () => {
  it('no source, test, script or README cites a document that is not in the repository', () => {
    // Built from parts, so this file does not cite it either.
    const outside = new RegExp([['DESIGN', 'md'].join('\\.'), ['', 'work', 'shared'].join('/'), ['seeds', ''].join('/')].join('|'));
    const sources = [...files(join(packageDir, 'src')), ...files(join(packageDir, 'test')), ...files(join(packageDir, 'first-run')), join(packageDir, 'README.md')];
    const citing = sources.filter((path) => outside.test(readFileSync(path, 'utf8'))).map((path) => relative(packageDir, path));
    expect(citing).toEqual([]);
  });

  it('every relative link of the README points at a file of the repository', () => {
    const links = [...readme.matchAll(/\]\(((?:\.\.?\/)[^)#\s]+)/g)].map((match) => match[1]!);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(existsSync(join(packageDir, link)), link).toBe(true);
  });

  it('the README claims no real-server result and says that none has run', () => {
    expect(readme).not.toMatch(/passes [^.]{0,60}conformance suite against a real server/i);
    expect(readme).toContain('No real MongoDB server has run this package');
    expect(readme).toContain('none has\nrun these suites yet');
  });

  it('the note on the server-side retry of duplicate-key upserts gives the versions that have it, and says it is off in transactions', () => {
    expect(readme).not.toMatch(/itself \(MongoDB 4\.2\+\)/);
    expect(readme).toContain('[SERVER-47212]');
    expect(readme).toMatch(/`findAndModify`, which the claim is, only from 5\.0/);
    expect(readme).toMatch(/never\s+inside a multi-document transaction/);
  });

  it('the first-run script the README documents exists, and so do the exit codes it names', () => {
    const script = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).scripts['test:real-server'] as string;
    expect(existsSync(join(packageDir, dirname(script.split(' ').at(-1)!), 'main.ts'))).toBe(true);
    for (const code of ['`0` every check', '`1` something failed', '`2` `MONGODB_URL` is not set', '`3` everything that ran passed']) {
      expect(readme).toContain(code);
    }
  });
});
