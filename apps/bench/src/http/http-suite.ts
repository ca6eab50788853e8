import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { BenchOptions } from '../cli/options.js';
import { alternate, type Contender } from '../harness/alternating.js';
import type { Report } from '../harness/report.js';
import { throughputTable } from '../harness/throughput-table.js';
import { ensureBenchDatabase } from '../postgres/bench-database.js';
import type { PrivateRedis } from '../servers/private-redis.js';
import { postWithKeys } from './autocannon-run.js';
import { ROUTES } from './routes.js';

const CONNECTIONS = 16;
const LABELS: Record<keyof typeof ROUTES, string> = {
  plain: 'route alone',
  memory: 'withIdempotency, memory store',
  postgres: 'withIdempotency, PostgreSQL store (lease)',
  redis: 'withIdempotency, Redis store',
};

async function startServer(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const script = fileURLToPath(new URL('./http-server-main.ts', import.meta.url));
  const child = fork(script, { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env }, stdio: 'inherit' });
  const ready = new Promise<void>((resolve, reject) => {
    child.once('message', (message) => (message === 'ready' ? resolve() : reject(new Error(`bench: server said ${String(message)}`))));
    child.once('exit', (code) => reject(new Error(`bench: HTTP server exited with ${code} before it was ready`)));
  });
  try {
    await ready;
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return child;
}

/** Before timing anything: a repeated key must come back as a replay of the first answer on every wrapped route. */
async function checkReplays(port: number): Promise<void> {
  for (const route of ['memory', 'postgres', 'redis'] as const) {
    const key = `check-${Date.now()}-${route}`;
    const post = () =>
      fetch(`http://127.0.0.1:${port}${ROUTES[route]}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `"${key}"`, 'x-tenant': 'bench' },
        body: JSON.stringify({ amount: 1000, currency: 'EUR' }),
      });
    const first = await post();
    const firstBody = (await first.json()) as { id: string };
    const second = await post();
    const secondBody = (await second.json()) as { id: string };
    if (first.status !== 201 || second.status !== 201 || second.headers.get('idempotent-replayed') !== 'true' || secondBody.id !== firstBody.id) {
      throw new Error(`bench: ${route} route did not replay: ${first.status}/${second.status} ${firstBody.id}/${secondBody.id}`);
    }
  }
}

/**
 * One route with and without `withIdempotency` (memory, PostgreSQL and Redis stores), loaded by
 * autocannon from this process while the server runs in a child process; 10 % of requests repeat
 * a key sent 45 requests earlier.
 */
export async function runHttpSuite(redis: PrivateRedis, options: BenchOptions, report: Report): Promise<void> {
  const port = options.httpPort;
  const server = await startServer({
    BENCH_HTTP_PORT: String(port),
    BENCH_REDIS_URL: redis.url,
    BENCH_DATABASE_URL: await ensureBenchDatabase(options.databaseUrl),
    BENCH_SCHEMA: 'bench_http',
  });
  const rejected = new Map<string, number[]>();
  try {
    await checkReplays(port);
    const prefix = `http${Date.now().toString(36)}`;
    const contenders: Contender[] = (Object.keys(ROUTES) as (keyof typeof ROUTES)[]).map((route) => {
      let run = 0;
      rejected.set(LABELS[route], []);
      return {
        name: LABELS[route],
        async run() {
          const result = await postWithKeys({
            url: `http://127.0.0.1:${port}${ROUTES[route]}`,
            connections: CONNECTIONS,
            durationSec: options.httpDurationSec,
            keyPrefix: `${prefix}-${route}-${run++}`,
            duplicateEvery: 10,
            duplicateLag: 45,
          });
          rejected.get(LABELS[route])!.push(result.non2xx + result.errors);
          return result;
        },
      };
    });
    const result = await alternate(contenders, options.rounds);
    report.section(
      `HTTP: one route with and without withIdempotency (autocannon, ${CONNECTIONS} connections, 10 % duplicate keys)`,
      [
        throughputTable(
          result,
          contenders.map((c, i) => ({ name: c.name, baseline: i === 0 ? undefined : LABELS.plain })),
        ),
        '',
        `Each run: ${options.httpDurationSec} s of keep-alive POSTs with a JSON body; every 10th request repeats the key of the`,
        'request 45 before it, so it is usually a replay (201 with `Idempotent-Replayed: true`) and occasionally a 409 while that',
        'first request is still running. Answers other than 2xx, per run (warm-up included): ' +
          [...rejected].map(([name, counts]) => `${name} ${counts.join('/')}`).join('; ') +
          '. The server is `node:http` with a small fetch adapter, in a child process; both sides use the same adapter.',
        'autocannon reports latency in whole milliseconds.',
      ].join('\n'),
    );
  } finally {
    const exited = once(server, 'exit');
    server.send('stop');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    if (server.exitCode === null) server.kill('SIGKILL');
  }
}
