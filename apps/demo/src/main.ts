import { parseHostFlags, SERVICE_USAGE, toServiceArgs, UsageError } from './cli/flags.js';
import { buildHostApp } from './host/host-app.js';
import { scenarioContext } from './scenarios/scenario-context.js';
import { freePort } from './supervisor/free-port.js';
import { superviseService } from './supervisor/service-process.js';

const USAGE = `npm run demo -- [flags]

Starts the payments service (on PGlite in apps/demo/data by default) under a supervisor that
restarts it when a fault kills it, and serves the dashboard and the API on one URL.

  --service-port <n>      the service's private loopback port (default: any free port)
${SERVICE_USAGE}`;

async function main(): Promise<void> {
  const config = parseHostFlags(process.argv.slice(2), process.env);
  if (config === 'help') {
    console.log(USAGE);
    return;
  }
  const servicePort = config.servicePort === 0 ? await freePort() : config.servicePort;
  // The private port always accepts faults, so the dashboard's scenarios work; the public URL only with --faults.
  const args = toServiceArgs({ ...config.service, host: '127.0.0.1', port: servicePort, faults: true, reset: false });
  console.log(`oncely demo: starting the payments service (store ${config.service.store})...`);
  const service = await superviseService({
    args,
    firstStartFlags: config.service.reset ? ['--reset'] : [],
    log: (line) => console.log(`  [service] ${line}`),
  });
  const app = await buildHostApp({
    service,
    scenarios: scenarioContext(service),
    store: config.service.store,
    faults: config.faults,
  });
  await app.listen({ host: config.host, port: config.port });
  const url = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${config.port}`;
  console.log(`\n  oncely demo is running: ${url}\n`);
  console.log(`  Dashboard: ${url}/`);
  console.log(`  Checkout:  ${url}/checkout`);
  console.log(`  Try:       curl -s -X POST ${url}/v1/payments -H 'Authorization: Bearer acme:alice' \\`);
  console.log(`               -H 'Idempotency-Key: demo-1' -H 'Content-Type: application/json' \\`);
  console.log(`               -d '{"account_id":"acc_1","amount":"10.00","currency":"USD"}'\n`);
  const shutdown = async () => {
    await app.close();
    await service.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
}

main().catch((error: Error) => {
  console.error(error instanceof UsageError ? `${error.message}\n\n${USAGE}` : error);
  process.exit(error instanceof UsageError ? 2 : 1);
});
