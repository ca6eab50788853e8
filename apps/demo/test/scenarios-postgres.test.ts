import { describeScenarios, serviceConfig } from './support/scenario-suite.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

// A schema of its own in the shared database, dropped and recreated by --reset.
describeScenarios('failure boundaries on PostgreSQL (child process, real HTTP, SIGKILL)', () =>
  serviceConfig({ port: 7311, store: 'postgres', database: { kind: 'postgres', url, schema: 'oncely_demo_test' } }),
);
