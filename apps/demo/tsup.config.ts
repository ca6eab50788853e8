import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/main.ts', 'src/service.ts', 'src/scenarios.ts'],
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  // Keep dist in place while rebuilding: a running demo or test may be using it.
  clean: false,
  sourcemap: true,
});
