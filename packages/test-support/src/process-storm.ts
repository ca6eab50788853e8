import type { NewOutboxEvent } from '@oncely/core/outbox';
import { credit } from './event-fixtures.js';
import { type AppliedRow, exactlyOnceInOrder } from './outbox-tables.js';
import type { Process } from './process-control.js';
import { sleep, until } from './until.js';

/** How big a storm is: `ONCELY_STORM_EVENTS=10000` and `ONCELY_STORM_BUDGET_MS` for the long run. */
export const STORM = (() => {
  const budgetMs = Number(process.env.ONCELY_STORM_BUDGET_MS ?? 60_000);
  return {
    /** Events enqueued: half up front, the rest during the storm, each aggregate's in sequence. */
    events: Number(process.env.ONCELY_STORM_EVENTS ?? 2_000),
    aggregates: 200,
    /** The storm's time budget; as long again is allowed for the last events. */
    budgetMs,
    /** What a test running one storm may take. */
    testTimeoutMs: 2 * budgetMs + 60_000,
  };
})();

/** Options of {@link processStorm}. */
export interface ProcessStormOptions {
  readonly pipeline: {
    enqueue(events: readonly NewOutboxEvent[]): Promise<void>;
    applied(): Promise<AppliedRow[]>;
    unpublished(): Promise<number>;
  };
  /** One starter per process of the storm (relays and consumers); a killed process is started again by its own. */
  readonly roles: readonly (() => Process)[];
  /** The processes alive now, for the caller to kill when the test ends however it ends. */
  readonly live: Process[];
  /** Takes the broker down and up once, when a third of the events are applied. */
  restartBroker(): Promise<void>;
}

/** What a storm did; the events applied are the caller's to check. */
export interface ProcessStormResult {
  readonly kills: number;
  readonly brokerRestarts: number;
  readonly elapsedMs: number;
  readonly applied: AppliedRow[];
  /** What went wrong: no broker restart, no kill, or what `exactlyOnceInOrder` finds; empty when the storm passed. */
  readonly problems: readonly string[];
  /** A line for the test's output. */
  readonly summary: string;
}

/**
 * Relays and consumers in their own processes, SIGKILLed at random (up to 12 times, 700 ms apart,
 * while less than 90% is applied) and the broker restarted once, when a third is applied, until
 * every event is applied and the outbox is empty.
 */
export async function processStorm(options: ProcessStormOptions): Promise<ProcessStormResult> {
  const { events: total, aggregates, budgetMs } = STORM;
  const { pipeline, roles, live } = options;
  const events = Array.from({ length: total }, (_, i) => credit(`acct-${i % aggregates}`));
  const half = Math.floor(total / 2);
  for (let i = 0; i < half; i += 500) await pipeline.enqueue(events.slice(i, Math.min(i + 500, half)));
  live.push(...roles.map((role) => role()));

  let kills = 0;
  let lastKill = 0;
  let brokerRestarts = 0;
  let enqueued = half;
  const started = Date.now();
  while (Date.now() - started < budgetMs) {
    const applied = (await pipeline.applied()).length;
    if (applied >= total) break;
    // The second half waits for the restart, so the restart finds events in flight however fast the first half went.
    if (brokerRestarts === 1 && enqueued < total) {
      await pipeline.enqueue(events.slice(enqueued, Math.min(enqueued + 500, total)));
      enqueued = Math.min(enqueued + 500, total);
    }
    if (brokerRestarts === 0 && applied >= total / 3) {
      await options.restartBroker();
      brokerRestarts += 1;
    } else if (kills < 12 && applied < total * 0.9 && Date.now() - lastKill >= 700) {
      const victim = Math.floor(Math.random() * live.length);
      await live[victim]!.kill();
      live[victim] = roles[victim]!();
      kills += 1;
      lastKill = Date.now();
    }
    // Polled often until the restart, so it comes near a third rather than up to 700 ms of progress later.
    await sleep(brokerRestarts === 0 ? 50 : 700);
  }
  await until('every event applied', async () => (await pipeline.applied()).length >= total && (await pipeline.unpublished()) === 0, budgetMs);
  const elapsedMs = Date.now() - started;
  const applied = await pipeline.applied();
  const problems = [
    ...(brokerRestarts === 1 ? [] : [`${brokerRestarts} broker restarts, expected 1`]),
    ...(kills > 0 ? [] : ['no process was killed']),
    ...exactlyOnceInOrder(applied, total),
  ];
  const summary = `${total} events of ${aggregates} aggregates applied in ${elapsedMs} ms, ${kills} SIGKILLs, ${brokerRestarts} broker restart`;
  return { kills, brokerRestarts, elapsedMs, applied, problems, summary };
}
