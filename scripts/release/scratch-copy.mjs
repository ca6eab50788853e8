// @ts-check
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Copies the repository at `root` into `dest` as a working copy would check it out, uncommitted
 * changes included (every file git tracks or would track), plus the built `dist` of each package
 * under `packages/`, which `npm publish` packs. `node_modules` is linked, not copied: the scratch
 * copy runs the repository's own changesets CLI, and nothing there is changed.
 * @param {string} root
 * @param {string} dest an empty folder
 * @param {readonly string[]} packageDirs folders (relative to `root`) whose `dist` is copied
 */
export function scratchCopy(root, dest, packageDirs) {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' });
  for (const file of new Set(listed.split('\0').filter(Boolean))) {
    // A file deleted in the working tree but not yet in the index is listed and absent: it is gone.
    if (!existsSync(join(root, file))) continue;
    mkdirSync(dirname(join(dest, file)), { recursive: true });
    cpSync(join(root, file), join(dest, file));
  }
  for (const dir of packageDirs) {
    const dist = join(root, dir, 'dist');
    if (!existsSync(dist)) throw new Error(`${dir} is not built: ${dist} is missing`);
    cpSync(dist, join(dest, dir, 'dist'), { recursive: true });
  }
  symlinkSync(join(root, 'node_modules'), join(dest, 'node_modules'));
}
