import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { viteMigrations } from './build/sql-migrations.js';

export default defineConfig({
  plugins: [viteMigrations(fileURLToPath(new URL('./sql', import.meta.url)))],
  test: {
    // Real-server suites share one PostgreSQL: one file at a time keeps them from starving each other.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
