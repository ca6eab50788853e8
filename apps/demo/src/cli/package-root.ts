import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The apps/demo folder, found from this module whether it runs from src (tsx) or dist. */
export function packageRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(folder, 'package.json'))) {
    const parent = dirname(folder);
    if (parent === folder) throw new Error('oncely demo: cannot find the package folder of apps/demo');
    folder = parent;
  }
  return folder;
}

/** True when this code runs from TypeScript sources (tests, tsx) rather than the built dist. */
export function runningFromSource(): boolean {
  return fileURLToPath(import.meta.url).endsWith('.ts');
}
