import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Real-server suites share one MongoDB; one file at a time keeps their races their own.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
