import { once } from 'node:events';
import { createServer } from 'node:http';
import { fetchRoutes } from './node-fetch-adapter.js';
import { buildRoutes } from './routes.js';

/**
 * The HTTP server of the bench, run as its own process so autocannon and the server do not share an
 * event loop. Configured by environment; reports `ready` over IPC and stops on `stop`.
 */
async function main(): Promise<void> {
  const port = Number(process.env.BENCH_HTTP_PORT);
  const { routes, close } = await buildRoutes({
    redisUrl: process.env.BENCH_REDIS_URL!,
    databaseUrl: process.env.BENCH_DATABASE_URL!,
    schema: process.env.BENCH_SCHEMA!,
  });
  const server = createServer({ keepAlive: true }, fetchRoutes(routes));
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  process.send?.('ready');
  process.on('message', (message) => {
    if (message !== 'stop') return;
    server.closeAllConnections();
    server.close(() => {
      close().finally(() => process.exit(0));
    });
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
