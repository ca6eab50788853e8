import { parseScenarioFlags, SERVICE_USAGE, toServiceArgs, UsageError } from './cli/flags.js';
import { runScenario } from './scenarios/run-scenario.js';
import { SCENARIOS } from './scenarios/catalog.js';
import { resultsTable } from './scenarios/results-table.js';
import { scenarioContext } from './scenarios/scenario-context.js';
import type { ScenarioResult } from './scenarios/scenario.js';
import { freePort } from './supervisor/free-port.js';
import { superviseService } from './supervisor/service-process.js';

const USAGE = `npm run demo:scenarios -- [flags]

Starts the payments service as a child process (with --faults), runs the nine scenarios
against it through real HTTP, restarts it when a scenario kills it, and prints a table. Exits 1 on
any FAIL.

  --only <list>           scenario numbers, e.g. 1,2,5 (default all)

The service flags below apply, with these defaults for a scenario run: --port a free port,
--data-dir apps/demo/data/scenarios-pglite, --schema oncely_demo_scenarios, --redis-prefix
oncely-demo-scenarios:, --reset and --faults always on, --lease-ms 3000 with --store redis.

${SERVICE_USAGE}`;

async function main(): Promise<number> {
  const parsed = parseScenarioFlags(process.argv.slice(2), process.env);
  if (parsed === 'help') {
    console.log(USAGE);
    return 0;
  }
  const port = parsed.service.port === 0 ? await freePort() : parsed.service.port;
  const args = toServiceArgs({ ...parsed.service, port, reset: false });
  const verbose = process.env.ONCELY_DEMO_VERBOSE === '1';
  console.log(`oncely demo: starting the payments service (store ${parsed.service.store}) on port ${port}...`);
  const service = await superviseService({
    args,
    firstStartFlags: parsed.service.reset ? ['--reset'] : [],
    log: (line, stream) => {
      if (verbose || stream === 'stderr') console.log(`  [service] ${line}`);
    },
  });
  const context = scenarioContext(service);
  const results: ScenarioResult[] = [];
  try {
    for (const id of parsed.only) {
      const scenario = SCENARIOS[id - 1]!;
      const result = await runScenario(scenario, context);
      results.push(result);
      console.log(`  ${result.verdict}  #${id} ${scenario.title} (${(result.durationMs / 1000).toFixed(1)} s)`);
    }
  } finally {
    await service.stop();
  }
  console.log(`\n${resultsTable(results)}\n`);
  const failed = results.filter((result) => result.verdict === 'FAIL').length;
  console.log(failed === 0 ? `All ${results.length} scenarios passed.` : `${failed} of ${results.length} scenarios FAILED.`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: Error) => {
    console.error(error instanceof UsageError ? `${error.message}\n\n${USAGE}` : error);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);
