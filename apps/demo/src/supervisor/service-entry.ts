import { join } from 'node:path';
import { packageRoot, runningFromSource } from '../cli/package-root.js';

/** How to start the payments service: the built `dist/service.js`, or `src/service.ts` through tsx in tests. */
export interface ServiceCommand {
  readonly execArgv: readonly string[];
  readonly entry: string;
}

/** The command matching how this code runs, so tests exercise the sources and `npm run demo` the build. */
export function serviceCommand(): ServiceCommand {
  const root = packageRoot();
  return runningFromSource()
    ? { execArgv: ['--import', 'tsx'], entry: join(root, 'src', 'service.ts') }
    : { execArgv: [], entry: join(root, 'dist', 'service.js') };
}
