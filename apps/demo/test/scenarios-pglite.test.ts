import { describeScenarios, serviceConfig, temporaryDataDir } from './support/scenario-suite.js';

const data = temporaryDataDir('scenarios');

describeScenarios(
  'failure boundaries on embedded PGlite (child process, real HTTP, SIGKILL)',
  () => serviceConfig({ port: 7310, store: 'pglite', database: { kind: 'pglite', dataDir: data.path } }),
  { cleanup: () => data.remove() },
);
