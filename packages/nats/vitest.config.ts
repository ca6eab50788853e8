import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Integration tests share real servers and private ports: one file at a time.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
