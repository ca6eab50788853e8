/** Every suite the bench can run, in the order it runs them. */
export const SUITES = ['jitter', 'engine', 'redis', 'postgres', 'bridges', 'http-fetch', 'http-express', 'http-fastify', 'http-hono', 'outbox', 'outbox-drain', 'brokers', 'recovery'] as const;

/** Names that stand for several suites: `--only=http` runs every HTTP binding's. */
const GROUPS: Readonly<Record<string, readonly SuiteName[]>> = {
  http: ['http-fetch', 'http-express', 'http-fastify', 'http-hono'],
};

/** The HTTP suites' routes besides the bare one, which every run keeps as the baseline: `--routes=memory,floor-memory` picks some. */
export const HTTP_ROUTES = ['floor-memory', 'memory', 'floor-redis', 'redis', 'postgres'] as const;

/** One of {@link HTTP_ROUTES}. */
export type HttpRouteName = (typeof HTTP_ROUTES)[number];

/** One suite's name. */
export type SuiteName = (typeof SUITES)[number];

/** What one bench invocation does. */
export interface BenchOptions {
  readonly mode: 'quick' | 'full';
  /** Alternating rounds per comparison; every headline ratio is a median over them. */
  readonly rounds: number;
  /** Length of one in-process closed-loop run. */
  readonly durationMs: number;
  /** Length of one autocannon run. */
  readonly httpDurationSec: number;
  /** Operations run once, untimed, to count round trips per operation. */
  readonly countOps: number;
  /** Completed keys each contender replays round-robin. */
  readonly replayKeys: number;
  readonly raceKeys: number;
  readonly raceDuplicates: number;
  /** Seeds per cell of the jitter simulation. */
  readonly jitterSeeds: number;
  /** Events per outbox run. */
  readonly outboxEvents: number;
  /** Backlog drained per outbox-drain run, its time cap, its rounds, and the length of its steady-load run. */
  readonly drainEvents: number;
  readonly drainCapMs: number;
  readonly drainRounds: number;
  readonly drainE2eMs: number;
  readonly suites: readonly SuiteName[];
  /** The HTTP suites' routes measured beside the bare route. */
  readonly httpRoutes: readonly HttpRouteName[];
  /** Port of the private redis-server the bench starts (7200-7299 belongs to the bench). */
  readonly redisPort: number;
  /** First port of the bench's loopback HTTP servers. */
  readonly httpPort: number;
  readonly databaseUrl: string;
}

/** Parses `--quick`, `--only=redis,jitter`, `--routes=memory` and friends; everything else keeps its default. */
export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const quick = argv.includes('--quick');
  const only = argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length);
  const suites = only
    ? only.split(',').flatMap((name) => {
        if (GROUPS[name]) return GROUPS[name];
        if (!(SUITES as readonly string[]).includes(name)) {
          throw new Error(`bench: unknown suite "${name}"; choose from ${[...SUITES, ...Object.keys(GROUPS)].join(', ')}`);
        }
        return [name as SuiteName];
      })
    : [...SUITES];
  const routes = argv.find((arg) => arg.startsWith('--routes='))?.slice('--routes='.length);
  const httpRoutes = routes
    ? routes.split(',').map((name) => {
        if (!(HTTP_ROUTES as readonly string[]).includes(name)) throw new Error(`bench: unknown route "${name}"; choose from ${HTTP_ROUTES.join(', ')}`);
        return name as HttpRouteName;
      })
    : HTTP_ROUTES;
  const unknown = argv.filter((arg) => arg !== '--quick' && !arg.startsWith('--only=') && !arg.startsWith('--routes='));
  if (unknown.length > 0) throw new Error(`bench: unknown arguments ${unknown.join(' ')}`);
  return {
    mode: quick ? 'quick' : 'full',
    rounds: quick ? 5 : 7,
    durationMs: quick ? 80 : 1_500,
    httpDurationSec: quick ? 0.5 : 5,
    countOps: quick ? 100 : 500,
    replayKeys: quick ? 200 : 1_000,
    raceKeys: quick ? 100 : 1_000,
    raceDuplicates: 32,
    jitterSeeds: quick ? 20 : 100,
    outboxEvents: quick ? 500 : 5_000,
    drainEvents: quick ? 10_000 : 100_000,
    drainCapMs: quick ? 5_000 : 15_000,
    drainRounds: quick ? 1 : 3,
    drainE2eMs: quick ? 3_000 : 10_000,
    suites: SUITES.filter((suite) => suites.includes(suite)),
    httpRoutes: HTTP_ROUTES.filter((route) => httpRoutes.includes(route)),
    redisPort: Number(env.BENCH_REDIS_PORT ?? 7201),
    httpPort: Number(env.BENCH_HTTP_PORT ?? 7210),
    databaseUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  };
}
