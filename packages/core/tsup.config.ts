import { defineConfig } from 'tsup';

export default defineConfig({
  // One entry per subpath of the package's `exports`.
  entry: {
    index: 'src/index.ts',
    retry: 'src/retry.ts',
    journal: 'src/journal.ts',
    outbox: 'src/outbox.ts',
    otel: 'src/otel.ts',
    adapter: 'src/adapter.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  // Shared chunks in both formats, so `OncelyError` and `StorageError` are one class whichever entry a module came from.
  splitting: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
});
