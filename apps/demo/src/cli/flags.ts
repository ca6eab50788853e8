import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { packageRoot } from './package-root.js';
import type { DatabaseTarget, RecordsTarget, ServiceConfig, StoreKind } from './service-config.js';

const STORES: readonly StoreKind[] = ['pglite', 'postgres', 'redis'];

/** Flags every entry point understands; each entry adds its own. */
const SERVICE_OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  store: { type: 'string' },
  'database-url': { type: 'string' },
  'redis-url': { type: 'string' },
  'data-dir': { type: 'string' },
  schema: { type: 'string' },
  'redis-prefix': { type: 'string' },
  faults: { type: 'boolean' },
  reset: { type: 'boolean' },
  'lease-ms': { type: 'string' },
  'retention-ms': { type: 'string' },
  'relay-lease-ms': { type: 'string' },
  help: { type: 'boolean' },
} as const;

/** A flag the user got wrong; entry points print it with the usage and exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Defaults that come from the environment, as the tests and CI set them. */
export interface Environment {
  readonly DATABASE_URL?: string;
  readonly REDIS_URL?: string;
}

function integer(name: string, value: string | undefined, fallback: number, minimum: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < minimum) {
    throw new UsageError(`--${name} must be an integer >= ${minimum}, got "${value}"`);
  }
  return parsed;
}

function storeOf(value: string | undefined): StoreKind {
  const store = (value ?? 'pglite') as StoreKind;
  if (!STORES.includes(store)) throw new UsageError(`--store must be one of ${STORES.join(', ')}, got "${value}"`);
  return store;
}

function identifier(name: string, value: string): string {
  // The schema is interpolated into SET search_path: only a plain identifier may pass.
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(value)) throw new UsageError(`--${name} must be a lowercase SQL identifier, got "${value}"`);
  return value;
}

/** Parsed flag values, as `parseArgs` returns them. */
interface ServiceValues {
  readonly port?: string;
  readonly host?: string;
  readonly store?: string;
  readonly 'database-url'?: string;
  readonly 'redis-url'?: string;
  readonly 'data-dir'?: string;
  readonly schema?: string;
  readonly 'redis-prefix'?: string;
  readonly faults?: boolean;
  readonly reset?: boolean;
  readonly 'lease-ms'?: string;
  readonly 'retention-ms'?: string;
  readonly 'relay-lease-ms'?: string;
}

function toServiceConfig(values: ServiceValues, env: Environment, defaultPort: number): ServiceConfig {
  const store = storeOf(values.store);
  const databaseUrl = values['database-url'];
  const database: DatabaseTarget =
    store === 'postgres' || (store === 'redis' && databaseUrl !== undefined)
      ? {
          kind: 'postgres',
          url: databaseUrl ?? env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
          schema: identifier('schema', values.schema ?? 'oncely_demo'),
        }
      : { kind: 'pglite', dataDir: values['data-dir'] ?? join(packageRoot(), 'data', 'pglite') };
  const records: RecordsTarget =
    store === 'redis'
      ? {
          kind: 'redis',
          url: values['redis-url'] ?? env.REDIS_URL ?? 'redis://127.0.0.1:6379',
          prefix: values['redis-prefix'] ?? 'oncely-demo:',
        }
      : { kind: 'database' };
  const leaseMs = integer('lease-ms', values['lease-ms'], 30_000, 1);
  const retentionMs = integer('retention-ms', values['retention-ms'], 86_400_000, 1);
  if (retentionMs < leaseMs) throw new UsageError('--retention-ms must be at least --lease-ms');
  const relayLeaseMs = integer('relay-lease-ms', values['relay-lease-ms'], 2_000, 2);
  return {
    host: values.host ?? '127.0.0.1',
    port: integer('port', values.port, defaultPort, 0),
    store,
    database,
    records,
    faults: values.faults ?? false,
    reset: values.reset ?? false,
    leaseMs,
    retentionMs,
    relayLeaseMs,
  };
}

/** Parses the payments service's flags (`service.js`). */
export function parseServiceFlags(argv: readonly string[], env: Environment): ServiceConfig | 'help' {
  const { values } = parse(argv, SERVICE_OPTIONS);
  if (values.help) return 'help';
  return toServiceConfig(values, env, 3000);
}

/** What `npm run demo` runs: the dashboard and API on `port`, the service as a supervised child. */
export interface HostConfig {
  readonly port: number;
  readonly host: string;
  /** Whether requests through the public URL may inject faults. */
  readonly faults: boolean;
  /** The child service's private loopback port (0: any free port). */
  readonly servicePort: number;
  readonly service: ServiceConfig;
}

/** Parses `npm run demo` flags. */
export function parseHostFlags(argv: readonly string[], env: Environment): HostConfig | 'help' {
  const { values } = parse(argv, { ...SERVICE_OPTIONS, 'service-port': { type: 'string' } });
  if (values.help) return 'help';
  const service = toServiceConfig(values, env, 3000);
  return {
    port: service.port,
    host: service.host,
    faults: service.faults,
    servicePort: integer('service-port', values['service-port'], 0, 0),
    service,
  };
}

/** What `npm run demo:scenarios` runs. */
export interface ScenarioRunConfig {
  readonly service: ServiceConfig;
  /** Scenario numbers to run, in order (default all nine). */
  readonly only: readonly number[];
}

/** Parses `npm run demo:scenarios` flags; the service gets its own data folder and a free port. */
export function parseScenarioFlags(argv: readonly string[], env: Environment): ScenarioRunConfig | 'help' {
  const { values } = parse(argv, { ...SERVICE_OPTIONS, only: { type: 'string' } });
  if (values.help) return 'help';
  const only = (values.only ?? '1,2,3,4,5,6,7,8,9').split(',').map((part) => integer('only', part.trim(), 0, 1));
  if (only.some((n) => n > 9)) throw new UsageError('--only takes scenario numbers 1 to 9');
  const service = toServiceConfig(
    {
      ...values,
      'data-dir': values['data-dir'] ?? join(packageRoot(), 'data', 'scenarios-pglite'),
      schema: values.schema ?? 'oncely_demo_scenarios',
      'redis-prefix': values['redis-prefix'] ?? 'oncely-demo-scenarios:',
      // Lease mode: a crashed attempt's record blocks retries until its lease lapses, so keep it short.
      'lease-ms': values['lease-ms'] ?? (values.store === 'redis' ? '3000' : undefined),
    },
    env,
    0,
  );
  return { service: { ...service, faults: true, reset: values.reset ?? true }, only };
}

/** Turns a config back into the service's argv, for the supervisor to start it with. */
export function toServiceArgs(config: ServiceConfig): string[] {
  const args = ['--host', config.host, '--port', String(config.port), '--store', config.store];
  if (config.database.kind === 'pglite') args.push('--data-dir', config.database.dataDir);
  else args.push('--database-url', config.database.url, '--schema', config.database.schema);
  if (config.records.kind === 'redis') args.push('--redis-url', config.records.url, '--redis-prefix', config.records.prefix);
  args.push('--lease-ms', String(config.leaseMs), '--retention-ms', String(config.retentionMs));
  args.push('--relay-lease-ms', String(config.relayLeaseMs));
  if (config.faults) args.push('--faults');
  if (config.reset) args.push('--reset');
  return args;
}

function parse<O extends Record<string, { type: 'string' | 'boolean' }>>(argv: readonly string[], options: O) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Usage text shared by the entry points. */
export const SERVICE_USAGE = `  --port <n>              port to listen on (default 3000)
  --host <address>        address to bind (default 127.0.0.1)
  --store <kind>          pglite (default) | postgres | redis: where idempotency records live
  --database-url <url>    PostgreSQL for --store postgres (default $DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test);
                          with --store redis, keeps the business data in PostgreSQL instead of PGlite
  --redis-url <url>       Redis for --store redis (default $REDIS_URL, else redis://127.0.0.1:6379)
  --data-dir <path>       PGlite data folder (default apps/demo/data/pglite)
  --schema <name>         PostgreSQL schema the demo owns (default oncely_demo)
  --redis-prefix <text>   Redis key prefix the demo owns (default oncely-demo:)
  --faults                honour the Oncely-Fault header and POST /v1/faults
  --reset                 wipe the demo's data first
  --lease-ms <n>          lease of an in-progress record (default 30000)
  --retention-ms <n>      how long idempotency records are kept (default 86400000)
  --relay-lease-ms <n>    how long the outbox relay holds a claimed event (default 2000)`;
