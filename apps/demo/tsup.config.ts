import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: ['src/main.ts', 'src/service.ts', 'src/scenarios.ts'],
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    // Keep dist in place while rebuilding: a running demo or test may be using it.
    clean: false,
    sourcemap: true,
  },
  {
    // The checkout page's script: one browser bundle with @oncely/http/browser inside.
    entry: { checkout: 'src/checkout/checkout-page.ts' },
    format: ['esm'],
    platform: 'browser',
    target: 'es2022',
    noExternal: [/.*/],
    minify: true,
    clean: false,
    sourcemap: true,
  },
]);
