import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

// Measurements, not tests: `npm run measure:races` runs them; `npm test` never does.
export default mergeConfig(base, defineConfig({ test: { include: ['test/**/*.measure.ts'], testTimeout: 3_600_000 } }));
