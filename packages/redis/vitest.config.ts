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
    // The peer range is ioredis ^5 || ^6: every test that talks to Redis runs on both majors.
    projects: [
      { extends: true, test: { name: 'ioredis 5' } },
      {
        extends: true,
        // `ioredis6` is the npm alias of ioredis 6 (devDependencies); child processes take it from the env.
        resolve: { alias: { ioredis: 'ioredis6' } },
        test: {
          name: 'ioredis 6',
          env: { ONCELY_IOREDIS: 'ioredis6' },
          // Pure functions of the store's own code, with no client: once is enough.
          exclude: ['test/store/record-key.test.ts', 'test/store/record-reply.test.ts', 'test/streams/stream-entry.test.ts', '**/node_modules/**'],
        },
      },
    ],
  },
});
