import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Options } from 'tsup';
import type { ViteUserConfig } from 'vitest/config';

/** The module `src/migrate` imports; it exists only at build and test time, made from `sql/`. */
export const MIGRATIONS_MODULE = 'virtual:oncely-postgres-migrations';

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];
type VitePlugin = Extract<NonNullable<ViteUserConfig['plugins']>[number], { name: string }>;

/** Every `.sql` file of `dir`, in name order, as module source: the migrations ship inside the bundle. */
function migrationsSource(dir: string): string {
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }));
  return `export const shippedMigrations = ${JSON.stringify(files)};\n`;
}

/** tsup (esbuild) side. */
export function esbuildMigrations(dir: string): EsbuildPlugin {
  return {
    name: 'oncely-postgres-migrations',
    setup(build) {
      build.onResolve({ filter: /^virtual:oncely-postgres-migrations$/ }, (args) => ({ path: args.path, namespace: 'oncely-sql' }));
      build.onLoad({ filter: /.*/, namespace: 'oncely-sql' }, () => ({
        contents: migrationsSource(dir),
        loader: 'js',
        watchDirs: [dir],
      }));
    },
  };
}

/** Vitest (Vite) side, so tests run the sources against the same files. */
export function viteMigrations(dir: string): VitePlugin {
  const resolved = `\0${MIGRATIONS_MODULE}`;
  return {
    name: 'oncely-postgres-migrations',
    resolveId: (id: string) => (id === MIGRATIONS_MODULE ? resolved : undefined),
    load: (id: string) => (id === resolved ? migrationsSource(dir) : undefined),
  };
}
