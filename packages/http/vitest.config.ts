import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Real servers on loopback ports, and a shared PostgreSQL: one file at a time.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
