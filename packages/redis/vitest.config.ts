import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Loads `.lua` files as their text, as tsup does at build time.
  plugins: [
    {
      name: 'lua-as-text',
      load(id) {
        return id.endsWith('.lua') ? `export default ${JSON.stringify(readFileSync(id, 'utf8'))};` : undefined;
      },
    },
  ],
  test: {
    // Integration tests share real servers and private ports: one file at a time.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
