import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { BenchOptions } from '../cli/options.js';
import { alternate, type Contender } from '../harness/alternating.js';
import { closedLoop } from '../harness/closed-loop.js';
import { formatMs, formatRate, formatRatio, markdownTable } from '../harness/markdown.js';
import type { Report } from '../harness/report.js';
import { median } from '../harness/stats.js';
import { ensureBenchDatabase } from '../postgres/bench-database.js';
import type { PrivateRedis } from '../servers/private-redis.js';
import { keyFor, postWithKeys } from './autocannon-run.js';
import { benchEngines, FLOORS, ROUTES, STORES } from './bench-engines.js';
import type { CpuReport, ServerRequest } from './http-server-main.js';
import { BENCH_BINDINGS, type BindingName } from './servers/bindings.js';

const CONNECTIONS = 16;
type RouteName = keyof typeof ROUTES;
/** The routes a run measures: the bare route, then those `--routes` picks (all by default), in the tables' order. */
const routeNames = (options: BenchOptions): readonly RouteName[] => ['plain', ...(options.httpRoutes satisfies readonly RouteName[])];

/** How each binding's rows are labelled. */
const BINDING_LABELS: Record<BindingName, { readonly title: string; readonly wrapped: string }> = {
  fetch: { title: 'fetch handler on node:http (small fetch adapter)', wrapped: 'withIdempotency' },
  express: { title: 'Express 5', wrapped: 'expressIdempotency' },
  fastify: { title: 'Fastify 5', wrapped: 'fastifyIdempotency' },
  hono: { title: 'Hono 4 on @hono/node-server', wrapped: 'honoIdempotency' },
};

/** The floor rows: the bare route plus only the store's raw work (store-floor.ts). */
const FLOOR_LABELS: Record<`floor-${(typeof FLOORS)[number]}`, string> = {
  'floor-memory': 'floor: route + Map get/set + SHA-256 of the body',
  'floor-redis': 'floor: route + Redis SET NX GET + SET (raw ioredis)',
};

const STORE_LABELS: Record<(typeof STORES)[number], string> = {
  memory: 'memory store',
  redis: 'Redis store',
  postgres: 'PostgreSQL store (lease)',
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

/** The server process's CPU time so far, in µs. */
async function serverCpu(server: ChildProcess): Promise<{ readonly micros: number; readonly userMicros: number }> {
  const answer = new Promise<{ readonly micros: number; readonly userMicros: number }>((resolve) => {
    const onMessage = (message: CpuReport) => {
      if (message?.kind !== 'cpu') return;
      server.off('message', onMessage);
      resolve({ micros: message.micros, userMicros: message.micros - message.systemMicros });
    };
    server.on('message', onMessage);
  });
  server.send('cpu' satisfies ServerRequest);
  return answer;
}

/** Before timing anything: a repeated key must come back as a replay of the first answer on every wrapped route. */
async function checkReplays(port: number): Promise<void> {
  for (const route of [...STORES, ...FLOORS.map((floor) => `floor-${floor}` as const)]) {
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
    const marked = route.startsWith('floor-') || second.headers.get('idempotent-replayed') === 'true';
    if (first.status !== 201 || second.status !== 201 || !marked || secondBody.id !== firstBody.id) {
      throw new Error(`bench: ${route} route did not replay: ${first.status}/${second.status} ${firstBody.id}/${secondBody.id}`);
    }
  }
}

/**
 * One binding: the bare route and the same route behind the binding on the memory, Redis and
 * PostgreSQL (lease) stores, loaded by autocannon from this process while the server runs in a
 * child process; 10 % of requests repeat a key sent 45 requests earlier. Besides throughput, the
 * server's own CPU time per request is read around every run: load generator and server share two
 * cores, so µs added per request is measured where the work happens, not inferred from req/s.
 */
export async function runHttpSuite(binding: BindingName, redis: PrivateRedis, options: BenchOptions, report: Report): Promise<void> {
  const port = options.httpPort;
  const labels = BINDING_LABELS[binding];
  const label = (route: RouteName) =>
    route === 'plain'
      ? 'route alone'
      : route === 'floor-memory' || route === 'floor-redis'
        ? FLOOR_LABELS[route]
        : `${labels.wrapped}, ${STORE_LABELS[route]}`;
  const server = await startServer({
    BENCH_BINDING: binding,
    BENCH_HTTP_PORT: String(port),
    BENCH_REDIS_URL: redis.url,
    BENCH_DATABASE_URL: await ensureBenchDatabase(options.databaseUrl),
    BENCH_SCHEMA: `bench_http_${binding}`,
  });
  const rejected = new Map<RouteName, number[]>();
  // Server CPU µs per request, one entry per run (the warm-up first), and its user-space part.
  const cpu = new Map<RouteName, number[]>();
  const userCpu = new Map<RouteName, number[]>();
  try {
    await checkReplays(port);
    const prefix = `http${Date.now().toString(36)}`;
    const routes = routeNames(options);
    const contenders: Contender[] = routes.map((route) => {
      let run = 0;
      rejected.set(route, []);
      cpu.set(route, []);
      userCpu.set(route, []);
      return {
        name: label(route),
        async run() {
          const before = await serverCpu(server);
          const result = await postWithKeys({
            url: `http://127.0.0.1:${port}${ROUTES[route]}`,
            connections: CONNECTIONS,
            durationSec: options.httpDurationSec,
            keyPrefix: `${prefix}-${route}-${run++}`,
            duplicateEvery: 10,
            duplicateLag: 45,
          });
          const after = await serverCpu(server);
          cpu.get(route)!.push((after.micros - before.micros) / Math.max(1, result.ops));
          userCpu.get(route)!.push((after.userMicros - before.userMicros) / Math.max(1, result.ops));
          rejected.get(route)!.push(result.non2xx + result.errors);
          return result;
        },
      };
    });
    const result = await alternate(contenders, options.rounds);
    report.section(
      `HTTP, ${labels.title}: the route with and without ${labels.wrapped} (autocannon, ${CONNECTIONS} connections, 10 % duplicate keys)`,
      [
        overheadTable(result, routes, cpu, label, 'server CPU µs/request', userCpu),
        '',
        `Each run: ${options.httpDurationSec} s of keep-alive POSTs with a JSON body; every 10th request repeats the key of the`,
        'request 45 before it, so it is usually a replay (201 with `Idempotent-Replayed: true`) and occasionally a 409 while that',
        'first request is still running. Server CPU is the server process\'s user + system time over the run (`process.cpuUsage`),',
        'divided by the requests answered; µs added is the same-round difference with the route alone, and user µs added its',
        "user-space part: on loopback, delivering each answer (and waking a load generator that went idle as the server slowed) is",
        "charged to the server's system time, which no network between client and server would charge it. Answers other than 2xx,",
        `per run (warm-up included): ${routes.map((route) => `${label(route)} ${rejected.get(route)!.join('/')}`).join('; ')}.`,
        'autocannon reports latency in whole milliseconds.',
      ].join('\n'),
    );
  } finally {
    const exited = once(server, 'exit');
    server.send('stop' satisfies ServerRequest);
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    if (server.exitCode === null) server.kill('SIGKILL');
  }
  await runInjection(binding, redis, options, report, label);
}

/**
 * Median CPU µs per request and the same-round difference with the route alone, next to throughput
 * and the ratio; with `userCpu`, that difference's user-space part too.
 */
function overheadTable(
  result: Awaited<ReturnType<typeof alternate>>,
  routes: readonly RouteName[],
  cpu: ReadonlyMap<RouteName, readonly number[]>,
  label: (route: RouteName) => string,
  cpuHeading: string,
  userCpu?: ReadonlyMap<RouteName, readonly number[]>,
): string {
  // Rotation changes the order within a round, not which round a run belongs to: run r+1 of each contender is round r.
  const timed = (perRun: ReadonlyMap<RouteName, readonly number[]>, route: RouteName) => perRun.get(route)!.slice(1);
  const added = (perRun: ReadonlyMap<RouteName, readonly number[]>, route: RouteName) =>
    route === 'plain' ? '—' : `+${median(timed(perRun, route).map((micros, round) => micros - timed(perRun, 'plain')[round]!)).toFixed(1)}`;
  const plain = result.byName.get(label('plain'))!;
  const rows = routes.map((route) => {
    const r = result.byName.get(label(route))!;
    const ratio = median(r.runs.map((run, round) => run.opsPerSec / plain.runs[round]!.opsPerSec));
    return [
      label(route),
      formatRate(r.medianOpsPerSec),
      formatMs(r.medianP50),
      formatMs(r.medianP99),
      route === 'plain' ? 'baseline' : formatRatio(ratio),
      median(timed(cpu, route)).toFixed(1),
      added(cpu, route),
      ...(userCpu ? [added(userCpu, route)] : []),
    ];
  });
  return markdownTable(
    [
      'contender',
      'req/s (median)',
      'p50 ms',
      'p99 ms',
      '÷ route alone (median of rounds)',
      cpuHeading,
      'µs added per request (median of rounds)',
      ...(userCpu ? ['user µs added (median of rounds)'] : []),
    ],
    rows,
  );
}

/**
 * The same four routes with no socket: the framework's own injection (fastify.inject,
 * light-my-request, `app.request`, a direct call) from 16 concurrent workers in this process, CPU
 * time per request read around every run. No kernel, no load generator: what is left is the
 * framework, the binding and the store client.
 */
async function runInjection(
  binding: BindingName,
  redis: PrivateRedis,
  options: BenchOptions,
  report: Report,
  label: (route: RouteName) => string,
): Promise<void> {
  const { engines, floors, close } = await benchEngines({
    redisUrl: redis.url,
    databaseUrl: await ensureBenchDatabase(options.databaseUrl),
    schema: `bench_inject_${binding}`,
  });
  try {
    const app = await BENCH_BINDINGS[binding](engines, floors);
    const cpu = new Map<RouteName, number[]>();
    const prefix = `inject${Date.now().toString(36)}`;
    const body = JSON.stringify({ amount: 1000, currency: 'EUR' });
    const routes = routeNames(options);
    const contenders: Contender[] = routes.map((route) => {
      let run = 0;
      cpu.set(route, []);
      return {
        name: label(route),
        async run() {
          const keys = { keyPrefix: `${prefix}-${route}-${run++}`, duplicateEvery: 10, duplicateLag: 45 };
          const before = process.cpuUsage();
          const result = await closedLoop({
            concurrency: CONNECTIONS,
            durationMs: options.durationMs,
            operation: async (index) => {
              const response = await app.inject({
                path: ROUTES[route],
                headers: { 'content-type': 'application/json', 'x-tenant': 'bench', 'idempotency-key': `"${keyFor(index, keys)}"` },
                body,
              });
              // A duplicate may land while its first request still runs (409); anything else is a broken route.
              if (response.status !== 201 && response.status !== 409) throw new Error(`bench: ${label(route)} answered ${response.status}: ${response.body}`);
            },
          });
          const used = process.cpuUsage(before);
          cpu.get(route)!.push((used.user + used.system) / Math.max(1, result.ops));
          return result;
        },
      };
    });
    const result = await alternate(contenders, options.rounds);
    report.section(
      `HTTP, ${BINDING_LABELS[binding].title}, in-process injection: CPU per request with and without ${BINDING_LABELS[binding].wrapped}`,
      [
        overheadTable(result, routes, cpu, label, 'CPU µs/request (injector included)'),
        '',
        `Each run: ${options.durationMs} ms of POSTs from ${CONNECTIONS} concurrent workers through the framework's own injection, in the`,
        'suite\'s process (no socket, no load generator process); the same key pattern as above. CPU per request includes the',
        'injection on both sides, so the difference is what the binding, the engine and the store client add.',
      ].join('\n'),
    );
  } finally {
    await close();
  }
}
