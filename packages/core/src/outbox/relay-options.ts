import type { Clock } from '../clock.js';
import type { EventListener } from '../events.js';
import { type LoopOwnerOptions, loopOwnerDefaults } from '../loop/loop-owner-options.js';
import { integerOption, invalidOption } from '../options/option-checks.js';
import { type BackoffOptions, fullJitter } from '../retry/full-jitter.js';
import { assertIdentifier } from './identifier.js';
import type { OutboxSource } from './outbox-source.js';
import type { Publisher } from './publisher.js';
import type { RelayEvent } from './relay-events.js';

/** How a relay deletes published events. */
export interface PurgeOptions {
  /** Published events are kept this long, for audits and debugging (default 86 400 000: 24 h). */
  readonly retainMs?: number;
  /** How often a relay purges (default 60 000). */
  readonly intervalMs?: number;
  /** Most rows deleted per purge (default 1 000). */
  readonly limit?: number;
}

/** Options of {@link createRelay}. */
export interface RelayOptions extends LoopOwnerOptions<RelayEvent> {
  /** Where events come from: `postgresOutbox(...).source`, a MongoDB outbox, or your own. */
  readonly source: OutboxSource;
  /** Where events go: `redisStreamPublisher(...)` or your own. */
  readonly publisher: Publisher;
  /** Most events claimed and published per round (default 100). */
  readonly batchSize?: number;
  /** How long a claim holds before another relay may take the events over (default 30 000 ms). */
  readonly leaseMs?: number;
  /** A batch the broker has not acknowledged by then counts as failed (default `leaseMs / 2`; must be below `leaseMs`). */
  readonly publishTimeoutMs?: number;
  /** An idle relay looks for due events this often; a wake-up (LISTEN/NOTIFY) ends the wait sooner (default 1 000 ms). */
  readonly pollIntervalMs?: number;
  /** Attempts before an event is dead-lettered, counting the first (default 10). */
  readonly maxAttempts?: number;
  /** Delay before a failed event is retried: `fullJitter(attempt - 1, backoff)` (default base 1 000 ms, cap 300 000 ms). */
  readonly backoff?: BackoffOptions;
  /** Pause after a storage failure: `fullJitter(failures in a row - 1, errorBackoff)` (default base 100 ms, cap 10 000 ms). */
  readonly errorBackoff?: BackoffOptions;
  /** The outbox gauges are read and reported this often; 0 turns it off (default 10 000 ms). */
  readonly statsIntervalMs?: number;
  /** Deletion of published events; `false` keeps them (default: kept 24 h, purged every minute). */
  readonly purge?: PurgeOptions | false;
  /** Lease owner name; unique per relay (default `relay-<uuid>`). */
  readonly id?: string;
}

/** {@link RelayOptions} with every default applied and every value checked. */
export interface ResolvedRelayOptions {
  readonly source: OutboxSource;
  readonly publisher: Publisher;
  readonly batchSize: number;
  readonly leaseMs: number;
  readonly publishTimeoutMs: number;
  readonly pollIntervalMs: number;
  readonly maxAttempts: number;
  readonly backoff: BackoffOptions;
  readonly errorBackoff: BackoffOptions;
  readonly statsIntervalMs: number;
  readonly purge: Required<PurgeOptions> | undefined;
  readonly id: string;
  readonly clock: Clock;
  readonly random: () => number;
  readonly onEvent: EventListener<RelayEvent> | undefined;
}

const invalid = (message: string) => invalidOption('oncely: createRelay', message);
const integer = (name: string, value: number, minimum: number) => integerOption(`oncely: createRelay ${name}`, value, minimum);

function backoffOf(name: string, value: BackoffOptions): BackoffOptions {
  if (!(value.baseMs > 0)) throw invalid(`${name}.baseMs must be positive, got ${value.baseMs}`);
  // fullJitter throws a coded error for anything else it cannot use (cap below base, non-finite cap).
  fullJitter(0, value, () => 0);
  return { baseMs: value.baseMs, capMs: value.capMs };
}

function purgeOf(purge: PurgeOptions): Required<PurgeOptions> {
  return {
    retainMs: integer('purge.retainMs', purge.retainMs ?? 86_400_000, 0),
    intervalMs: integer('purge.intervalMs', purge.intervalMs ?? 60_000, 1),
    limit: integer('purge.limit', purge.limit ?? 1_000, 1),
  };
}

/** Applies the defaults of {@link RelayOptions} and refuses values a relay could not run with. */
export function resolveRelayOptions(options: RelayOptions): ResolvedRelayOptions {
  const { source, publisher } = options;
  if (!source || typeof source.claim !== 'function') throw invalid('needs a source (an OutboxSource)');
  if (!publisher || typeof publisher.publish !== 'function') throw invalid('needs a publisher');
  const leaseMs = integer('leaseMs', options.leaseMs ?? 30_000, 1);
  const publishTimeoutMs = integer('publishTimeoutMs', options.publishTimeoutMs ?? Math.max(1, Math.floor(leaseMs / 2)), 1);
  if (publishTimeoutMs >= leaseMs) {
    throw invalid('publishTimeoutMs must be below leaseMs, or another relay takes the events over mid-publish');
  }
  const id = options.id ?? `relay-${globalThis.crypto.randomUUID()}`;
  assertIdentifier('invalid_option', 'relay id', id);
  return {
    source,
    publisher,
    batchSize: integer('batchSize', options.batchSize ?? 100, 1),
    leaseMs,
    publishTimeoutMs,
    pollIntervalMs: integer('pollIntervalMs', options.pollIntervalMs ?? 1_000, 1),
    maxAttempts: integer('maxAttempts', options.maxAttempts ?? 10, 1),
    backoff: backoffOf('backoff', options.backoff ?? { baseMs: 1_000, capMs: 300_000 }),
    errorBackoff: backoffOf('errorBackoff', options.errorBackoff ?? { baseMs: 100, capMs: 10_000 }),
    statsIntervalMs: integer('statsIntervalMs', options.statsIntervalMs ?? 10_000, 0),
    purge: options.purge === false ? undefined : purgeOf(options.purge ?? {}),
    id,
    ...loopOwnerDefaults(options),
    onEvent: options.onEvent,
  };
}
