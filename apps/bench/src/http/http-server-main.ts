import { benchEngines } from './bench-engines.js';
import { BENCH_BINDINGS, type BindingName } from './servers/bindings.js';

/** What the suite asks the server over IPC. */
export type ServerRequest = 'stop' | 'cpu';

/** The server's CPU time so far (user + system, µs): read before and after a run to get µs per request. */
export interface CpuReport {
  readonly kind: 'cpu';
  readonly micros: number;
  /** The kernel's share of `micros` (loopback TCP is delivered on the sender's system time). */
  readonly systemMicros: number;
}

/**
 * The HTTP server of the bench, run as its own process so autocannon and the server do not share an
 * event loop. Configured by environment; reports `ready` over IPC, answers `cpu` with its CPU time
 * and stops on `stop`.
 */
async function main(): Promise<void> {
  const binding = process.env.BENCH_BINDING as BindingName;
  const build = BENCH_BINDINGS[binding];
  if (!build) throw new Error(`bench: no HTTP binding named ${binding}`);
  const { engines, floors, close } = await benchEngines({
    redisUrl: process.env.BENCH_REDIS_URL!,
    databaseUrl: process.env.BENCH_DATABASE_URL!,
    schema: process.env.BENCH_SCHEMA!,
  });
  const server = await (await build(engines, floors)).listen(Number(process.env.BENCH_HTTP_PORT));
  process.send?.('ready');
  process.on('message', (message: ServerRequest) => {
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send?.({ kind: 'cpu', micros: user + system, systemMicros: system } satisfies CpuReport);
      return;
    }
    if (message !== 'stop') return;
    server.close().then(close).finally(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
