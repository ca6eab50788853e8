import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { viteMigrations } from './build/sql-migrations.js';

/**
 * Files that run alone, after the rest: a private cluster on 31432-31439 (a restart frees its port for a
 * moment), storms of kills and crowds of processes, and the store suite's 400 ms leases on PGlite, which
 * shares the CPU with its test (a neighbour file stalled it past a lease margin at load 13).
 */
const EXCLUSIVE = [
  'test/failure/server-restart.test.ts',
  'test/failure/bookkeeping-crash.test.ts',
  'test/failure/connection-storm.test.ts',
  'test/outbox/failure-boundaries.test.ts',
  'test/bridges/drizzle-pglite.test.ts',
  'test/pglite/pglite.test.ts',
];

export default defineConfig({
  plugins: [viteMigrations(fileURLToPath(new URL('./sql', import.meta.url)))],
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        // Every other file writes only in its own schema, tables and application_name: two at a time
        // keeps two round-trip-bound files busy without starving the shared server.
        test: { name: 'shared', exclude: [...EXCLUSIVE, '**/node_modules/**'], maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'exclusive', include: EXCLUSIVE, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
