// Generates the Prisma client of the Prisma bridge tests (test/bridges/prisma/generated, not
// committed) with no network: Prisma 7's client and query compiler come from npm, and the schema
// engine the CLI would otherwise download first is never used by `generate`.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const cli = createRequire(import.meta.url).resolve('prisma/build/index.js');
execFileSync(process.execPath, [cli, 'generate', '--schema', fileURLToPath(new URL('../test/bridges/prisma/schema.prisma', import.meta.url))], {
  stdio: ['ignore', 'inherit', 'inherit'],
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: fileURLToPath(new URL('./no-schema-engine', import.meta.url)),
    // No update check or telemetry call home.
    CHECKPOINT_DISABLE: '1',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
  },
});
