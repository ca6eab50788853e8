import { processControl } from '@oncely/test-support';

/** The relay and consumer processes of `test/processes`, and the builds they import. */
export const { assertBuilt, killStarted, startProcess } = processControl({
  processes: new URL('../processes/', import.meta.url),
  builds: ['../../dist/index.js', '../../../postgres/dist/index.js', '../../../core/dist/index.js'].map((path) => new URL(path, import.meta.url)),
  packageName: '@oncely/rabbitmq',
});
