import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The lease and expiry tests wait on SQLite's real clock; the suite's own timeouts bound each test.
    testTimeout: 60_000,
  },
});
