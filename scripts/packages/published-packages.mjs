// @ts-check
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A workspace package that `changeset publish` publishes.
 * @typedef {object} PublishedPackage
 * @property {string} name
 * @property {string} dir its folder, relative to the repository root (`packages/core`)
 * @property {{ name: string, version: string, license?: string, private?: boolean }} manifest its package.json
 */

/**
 * Every package under `packages/` that is not private, by folder name.
 * @param {string} root the repository root
 * @returns {PublishedPackage[]}
 */
export function publishedPackages(root) {
  return readdirSync(join(root, 'packages'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => {
      const dir = join('packages', entry.name);
      const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
      return { name: manifest.name, dir, manifest };
    })
    .filter((pkg) => pkg.manifest.private !== true)
    .sort((a, b) => a.dir.localeCompare(b.dir));
}

/**
 * The files `npm pack` puts in the package's tarball (a dry run: nothing is written).
 * @param {string} packageDir an absolute path
 * @returns {Promise<string[]>}
 */
export async function packedFiles(packageDir) {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: packageDir });
  const [report] = JSON.parse(stdout);
  return report.files.map((/** @type {{ path: string }} */ file) => file.path);
}
