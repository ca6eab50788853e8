import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The scenario suites start services, kill them and share PostgreSQL: one file at a time.
    fileParallelism: false,
    globalSetup: ['test/support/pglite-template.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
