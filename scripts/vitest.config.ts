import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The README example compiles with tsc and runs twice in Node processes.
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
