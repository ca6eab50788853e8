import { parseServiceFlags, SERVICE_USAGE, UsageError } from './cli/flags.js';
import { startService } from './service/start-service.js';

const USAGE = `node dist/service.js [flags]

The payments service alone (what the dashboard supervises). Prefer \`npm run demo\`.

${SERVICE_USAGE}`;

async function main(): Promise<void> {
  const config = parseServiceFlags(process.argv.slice(2), process.env);
  if (config === 'help') {
    console.log(USAGE);
    return;
  }
  const service = await startService(config);
  console.log(`payments service listening on http://${config.host}:${service.port} (store ${config.store}, pid ${process.pid})`);
  // Under the supervisor: report the port, and exit with it so no orphan keeps the PGlite folder.
  process.send?.({ type: 'listening', port: service.port });
  process.on('disconnect', () => void shutdown('the supervisor went away'));
  let closing = false;
  async function shutdown(reason: string): Promise<void> {
    if (closing) return;
    closing = true;
    console.log(`payments service stopping: ${reason}`);
    await service.close();
    process.exit(0);
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // Ctrl-C reaches the whole process group; under a supervisor, the supervisor decides when we stop.
  process.on('SIGINT', () => (process.send ? undefined : void shutdown('SIGINT')));
}

main().catch((error: Error) => {
  console.error(error instanceof UsageError ? `${error.message}\n\n${USAGE}` : error);
  process.exit(error instanceof UsageError ? 2 : 1);
});
