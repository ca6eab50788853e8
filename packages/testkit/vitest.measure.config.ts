import { defineConfig } from 'vitest/config';

// Measurements, not tests: `npm run measure:races` runs them; `npm test` never does.
export default defineConfig({ test: { include: ['test/**/*.measure.ts'], testTimeout: 3_600_000 } });
