import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  // Keep dist in place while rebuilding: child-process tests of a parallel run import it.
  clean: false,
  sourcemap: true,
  target: 'es2022',
});
