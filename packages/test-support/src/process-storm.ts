import type { NewOutboxEvent } from '@oncely/core/outbox';
import { credit } from './event-fixtures.js';
import type { AppliedRow } from './outbox-tables.js';
import type { Process } from './process-control.js';
import { sleep, until } from './until.js';

/** Options of {@link processStorm}. */
export interface ProcessStormOptions {
  /** Events enqueued: half up front, the rest during the storm, each aggregate's in sequence. */
  readonly events: number;
  readonly aggregates: number;
  /** The storm's time budget; as long again is allowed for the last events. */
  readonly budgetMs: number;
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
}

/**
 * Relays and consumers in their own processes, SIGKILLed at random (up to 12 times, while less
 * than 90% is applied) and the broker restarted once, until every event is applied and the
 * outbox is empty.
 */
export async function processStorm(options: ProcessStormOptions): Promise<ProcessStormResult> {
  const { events: total, aggregates, budgetMs, pipeline, roles, live } = options;
  const events = Array.from({ length: total }, (_, i) => credit(`acct-${i % aggregates}`));
  const half = Math.floor(total / 2);
  for (let i = 0; i < half; i += 500) await pipeline.enqueue(events.slice(i, Math.min(i + 500, half)));
  live.push(...roles.map((role) => role()));

  let kills = 0;
  let brokerRestarts = 0;
  let enqueued = half;
  const started = Date.now();
  while (Date.now() - started < budgetMs) {
    const applied = (await pipeline.applied()).length;
    if (applied >= total) break;
    if (enqueued < total) {
      await pipeline.enqueue(events.slice(enqueued, Math.min(enqueued + 500, total)));
      enqueued = Math.min(enqueued + 500, total);
    }
    if (brokerRestarts === 0 && applied >= total / 3) {
      await options.restartBroker();
      brokerRestarts += 1;
    } else if (kills < 12 && applied < total * 0.9) {
      const victim = Math.floor(Math.random() * live.length);
      await live[victim]!.kill();
      live[victim] = roles[victim]!();
      kills += 1;
    }
    await sleep(700);
  }
  await until('every event applied', async () => (await pipeline.applied()).length >= total && (await pipeline.unpublished()) === 0, budgetMs);
  return { kills, brokerRestarts, elapsedMs: Date.now() - started, applied: await pipeline.applied() };
}
