import type { InboxOutcome, OutboxEvent, OutboxSource, Publisher } from '@oncely/core/adapter';
import type { NewOutboxEvent } from '@oncely/core/outbox';
import type pg from 'pg';
import { credit } from './event-fixtures.js';
import { type AppliedRow, exactlyOnceInOrder } from './outbox-tables.js';
import { type InboxLike, insertApplied, testRelay } from './test-relay.js';
import { unheardErrors } from './unheard-errors.js';
import { sleep } from './until.js';

/** One way of killing connections, run in its own loop during the storm. */
export interface Killer {
  /** Pause between two kills. */
  readonly everyMs: number;
  /** Kills what it kills now; resolves how many connections went. */
  kill(): Promise<number>;
}

/** What a storm test runs over connections its killers kill. */
export interface StormedParties {
  /** The publisher of the relay the storm runs. */
  readonly publisher: Publisher;
  /** The consumers, each applying through the `handle` the storm gave. */
  readonly consumers: readonly { start(): Promise<void>; stop(): Promise<void> }[];
  /** Closes the connections, after the relay and the consumers stopped. */
  close(): Promise<void>;
}

/** Options of {@link connectionStorm}. */
export interface ConnectionStormOptions {
  /** The relay's id and the consumer's name: name the stormed connections after it, so only they are killed. */
  readonly name: string;
  readonly pipeline: {
    readonly schema: string;
    enqueue(events: readonly NewOutboxEvent[]): Promise<void>;
    applied(): Promise<AppliedRow[]>;
    unpublished(): Promise<number>;
  };
  /** How long connections are killed while events are enqueued. */
  readonly durationMs: number;
  /** After the storm, how long the relay and the consumers have to drain everything. */
  readonly drainMs: number;
  readonly aggregates: number;
  /** Ten events are enqueued this often during the storm (default 50 ms). */
  readonly enqueueEveryMs?: number;
  /** The outbox the relay claims from and the inbox the consumers apply through, on the stormed pool. */
  readonly source: OutboxSource;
  readonly inbox: InboxLike;
  /** Opens the stormed connections: the relay's publisher and the consumers, each applying through `handle`. */
  open(handle: (event: OutboxEvent) => Promise<InboxOutcome>): Promise<StormedParties>;
  readonly killers: Readonly<Record<string, Killer>>;
}

/** What a storm did and what the test process heard of it. */
export interface ConnectionStormResult {
  /** Events enqueued: every one must be applied once, in order. */
  readonly events: number;
  readonly kills: Readonly<Record<string, number>>;
  /** Everything that reached `uncaughtException` or `unhandledRejection` from the start to the stop. */
  readonly unheard: readonly unknown[];
  /** Every `MaxListenersExceededWarning` the process emitted meanwhile: listeners piling up on one emitter or signal. */
  readonly listenerWarnings: readonly Error[];
  readonly applied: readonly AppliedRow[];
  /**
   * What went wrong: each uncaught error and listener warning, events left unpublished, and what
   * `exactlyOnceInOrder` finds; empty when the storm passed.
   */
  readonly problems: readonly string[];
  /** A line for the test's output: events, kills, crashes, duplicates. */
  readonly summary: string;
}

/** Kills every backend of `applicationName` with `pg_terminate_backend`, through `admin` (another application name). */
export const terminateBackends =
  (admin: pg.Pool, applicationName: string): (() => Promise<number>) =>
  async () => {
    const { rows } = await admin.query<{ n: number }>(
      'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    );
    return rows[0]!.n;
  };

/**
 * An in-process relay ({@link testRelay}) and consumers draining a pipeline while each killer
 * kills their connections in a loop of its own for `durationMs`, and events are enqueued (10
 * every `enqueueEveryMs`, over `aggregates` aggregates). Counts what reaches `uncaughtException` and `unhandledRejection`, and
 * the `MaxListenersExceededWarning`s, in this process from the start until the relay and consumers
 * are stopped, after the drain.
 */
export async function connectionStorm(options: ConnectionStormOptions): Promise<ConnectionStormResult> {
  const { pipeline, aggregates, killers } = options;
  const heard = unheardErrors();
  const listenerWarnings: Error[] = [];
  const warned = (warning: Error) => {
    if (warning.name === 'MaxListenersExceededWarning') listenerWarnings.push(warning);
  };
  process.on('warning', warned);
  const kills: Record<string, number> = Object.fromEntries(Object.keys(killers).map((name) => [name, 0]));
  let events = 0;
  try {
    const handle = (event: OutboxEvent) =>
      options.inbox.run({ consumer: 'billing', eventId: event.eventId }, (tx) => insertApplied(tx, pipeline.schema, options.name, event));
    const parties = await options.open(handle);
    const relay = testRelay({ source: options.source, publisher: parties.publisher, id: options.name, batchSize: 20, pollIntervalMs: 50 });
    try {
      relay.start();
      await Promise.all(parties.consumers.map((consumer) => consumer.start()));
      const end = Date.now() + options.durationMs;
      const work = (async () => {
        while (Date.now() < end) {
          await pipeline.enqueue(Array.from({ length: 10 }, (_, i) => credit(`acct-${(events + i) % aggregates}`)));
          events += 10;
          await sleep(options.enqueueEveryMs ?? 50);
        }
      })();
      const storms = Object.entries(killers).map(async ([name, killer]) => {
        while (Date.now() < end) {
          kills[name]! += await killer.kill();
          await sleep(killer.everyMs);
        }
      });
      await Promise.all([work, ...storms]);
      const drainEnd = Date.now() + options.drainMs;
      while (Date.now() < drainEnd && ((await pipeline.applied()).length < events || (await pipeline.unpublished()) > 0)) await sleep(100);
    } finally {
      await Promise.all([relay.stop(), ...parties.consumers.map((consumer) => consumer.stop())]);
      await parties.close();
    }
  } finally {
    heard.stop();
    process.off('warning', warned);
  }
  const applied = await pipeline.applied();
  const duplicates = applied.length - new Set(applied.map((row) => row.event_id)).size;
  const killed = Object.entries(kills)
    .map(([name, n]) => `${n} ${name}`)
    .join(', ');
  const unpublished = await pipeline.unpublished();
  const problems = [
    ...heard.errors.map((error) => `uncaught: ${String(error)}`),
    ...listenerWarnings.map((warning) => `listener warning: ${warning.message}`),
    ...(unpublished > 0 ? [`${unpublished} events still unpublished`] : []),
    ...exactlyOnceInOrder(applied, events),
  ];
  const summary = `${events} events, ${applied.length} applied, kills: ${killed}, crashes (uncaught): ${heard.errors.length}, listener warnings: ${listenerWarnings.length}, duplicates applied: ${duplicates}`;
  return { events, kills, unheard: heard.errors, listenerWarnings, applied, problems, summary };
}
