import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// Measurements, not tests: `npm run measure:races` runs them, one file at a time; `npm test` never does.
// The base's plugins only: its projects would bring the exclusive test files along.
export default defineConfig({
  plugins: base.plugins,
  test: { include: ['test/**/*.measure.ts'], fileParallelism: false, testTimeout: 3_600_000, hookTimeout: 60_000 },
});
