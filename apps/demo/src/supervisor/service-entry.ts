import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot, runningFromSource } from '../cli/package-root.js';

/** How to start one of the demo's entry points in a Node process of its own. */
export interface ServiceCommand {
  readonly execArgv: readonly string[];
  readonly entry: string;
}

/** True when `built` was written after every file under src changed: it is what the sources compile to. */
function builtAfterSources(root: string, built: string): boolean {
  if (!existsSync(built)) return false;
  const builtAt = statSync(built).mtimeMs;
  const src = join(root, 'src');
  return readdirSync(src, { recursive: true, encoding: 'utf8' }).every((path) => statSync(join(src, path)).mtimeMs <= builtAt);
}

/**
 * `dist/<name>.js`, what `npm run demo` runs, when it is built from the current sources (in tests too:
 * turbo builds before it tests, and tsx would compile the same sources again in every child, ~1 s each);
 * otherwise `src/<name>.ts` through tsx, so a test after an edit without a build runs the edit.
 */
export function entryCommand(name: 'service' | 'scenarios'): ServiceCommand {
  const root = packageRoot();
  const built = join(root, 'dist', `${name}.js`);
  return !runningFromSource() || builtAfterSources(root, built)
    ? { execArgv: [], entry: built }
    : { execArgv: ['--import', 'tsx'], entry: join(root, 'src', `${name}.ts`) };
}

/** How to start the payments service. */
export const serviceCommand = (): ServiceCommand => entryCommand('service');
