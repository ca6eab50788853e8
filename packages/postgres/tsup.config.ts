import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { esbuildMigrations } from './build/sql-migrations.js';

export default defineConfig({
  entry: [
    'src/index.ts',
    'src/drizzle.ts',
    'src/kysely.ts',
    'src/knex.ts',
    // One entry per ORM bridge, each importing only its ORM's types: nothing loads unless used.
    'src/typeorm.ts',
    'src/mikro-orm.ts',
    'src/prisma.ts',
  ],
  format: ['esm', 'cjs'],
  dts: true,
  // Keep dist in place while rebuilding: fixtures and other packages may be importing it.
  clean: false,
  sourcemap: true,
  target: 'es2022',
  // Not a declared peer (see the README's ORM bridges), so tsup would bundle it: the user's own copy must be the one loaded.
  external: ['drizzle-orm'],
  // The shipped .sql files are embedded, so migrate() needs no file system (PGlite runs in browsers too).
  esbuildPlugins: [esbuildMigrations(fileURLToPath(new URL('./sql', import.meta.url)))],
});
