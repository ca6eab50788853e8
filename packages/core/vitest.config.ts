import { defineConfig } from 'vitest/config';

// Property tests of thousands of runs take a second alone and several on a loaded CI host; no test asserts time.
export default defineConfig({ test: { testTimeout: 30_000, hookTimeout: 60_000 } });
