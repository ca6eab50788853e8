import { defineConfig } from 'tsup';

export default defineConfig({
  // `processes` is what the child-process bodies import; the rest is for the test files.
  entry: ['src/index.ts', 'src/processes.ts'],
  format: ['esm'],
  dts: true,
  // Keep dist in place while rebuilding: child processes of a parallel run import it.
  clean: false,
  sourcemap: true,
  target: 'es2022',
});
