import { Redis } from 'ioredis';
import { deleteKeysWithPrefix } from '../src/service/redis-reset.js';
import { describeScenarios, serviceConfig } from './support/scenario-suite.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const prefix = `oncely-demo-test:${Date.now().toString(36)}:`;

async function cleanup(): Promise<void> {
  const client = new Redis(url);
  try {
    await deleteKeysWithPrefix(client, prefix);
  } finally {
    await client.quit();
  }
}

// Records in Redis (lease mode), business data in PostgreSQL (--database-url). Only the boundaries
// where the records' store matters: 5, 6 and 8 exercise the outbox, inbox and clients, the same in every mode.
describeScenarios(
  'failure boundaries with idempotency records in Redis (lease mode)',
  () =>
    serviceConfig({
      port: 7314,
      store: 'redis',
      database: { kind: 'postgres', url: databaseUrl, schema: 'oncely_demo_test_redis' },
      records: { kind: 'redis', url, prefix },
      // A crashed attempt's record blocks retries until its lease lapses: keep it short.
      leaseMs: 3_000,
    }),
  { only: [1, 2, 3, 4, 7], cleanup },
);
