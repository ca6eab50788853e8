import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('the published tarball', () => {
  it('ships every file its source maps point at, so a failing test shows a frame of a shipped file', () => {
    const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' })) as [{ files: { path: string }[] }];
    const shipped = new Set(pack.files.map((file) => file.path));
    const maps = [...shipped].filter((path) => path.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(0);
    for (const map of maps) {
      const { sources, sourcesContent } = JSON.parse(readFileSync(join(root, map), 'utf8')) as { sources: string[]; sourcesContent?: string[] };
      expect(sourcesContent?.length, `${map} carries no sourcesContent`).toBe(sources.length);
      for (const source of sources) {
        const target = relative(root, normalize(join(root, dirname(map), source)));
        expect(shipped.has(target), `${map} points at ${target}, which the tarball does not ship`).toBe(true);
      }
    }
  });
});
