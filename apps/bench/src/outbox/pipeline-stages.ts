import type { InboxOutcome, OutboxEvent, OutboxSource, Publisher } from '@oncely/core/adapter';
import { preciseNow } from '../harness/precise-clock.js';
import { quantileSorted } from '../harness/stats.js';
import type { ProducerStamp } from './producer-process.js';

/**
 * The moments of one event on its way (epoch ms with a fraction, app clock; `created` is the enqueue
 * statement's, database clock, which the outbox reports rounded down to the millisecond).
 */
interface EventMoments {
  created: number;
  enqueued?: number;
  committed?: number;
  claimStarted?: number;
  claimed?: number;
  acked?: number;
  marked?: number;
  read?: number;
  applied?: number;
}

/** One stage: from one moment to the next. */
const STAGES: readonly { readonly name: string; readonly from: keyof EventMoments; readonly to: keyof EventMoments }[] = [
  { name: 'enqueue statement', from: 'created', to: 'enqueued' },
  { name: 'enqueue returned → commit returned', from: 'enqueued', to: 'committed' },
  { name: 'commit → claim started (relay busy or idle)', from: 'committed', to: 'claimStarted' },
  { name: 'claim statement', from: 'claimStarted', to: 'claimed' },
  { name: 'claimed → publish acked (XADD)', from: 'claimed', to: 'acked' },
  { name: 'acked → marked published', from: 'acked', to: 'marked' },
  { name: 'acked → read by the consumer (XREADGROUP)', from: 'acked', to: 'read' },
  { name: 'read → inbox committed', from: 'read', to: 'applied' },
  { name: 'end to end: enqueue → inbox committed', from: 'created', to: 'applied' },
];

type BatchResult = { readonly outcomes: readonly InboxOutcome[] };

/** A run's per-stage percentiles and what the relay did, to see where end-to-end latency goes. */
export interface StageSummary {
  readonly stages: readonly { readonly name: string; readonly p50: number; readonly p99: number }[];
  readonly claims: number;
  readonly emptyClaims: number;
  readonly eventsPerClaim: number;
  /** The relay's idle waits: how many, and their median length. */
  readonly idleWaits: number;
  readonly idleWaitP50: number;
}

/**
 * Wraps the pieces of a pipeline (source, publisher, batch handler) to stamp each event as it passes.
 * Measurement only: it changes no call and no answer.
 */
export function pipelineStages() {
  const moments = new Map<string, EventMoments>();
  const at = (eventId: string) => moments.get(eventId);
  const waits: number[] = [];
  let claims = 0;
  let emptyClaims = 0;
  let claimedEvents = 0;

  const stamp = (eventIds: Iterable<string>, key: keyof EventMoments, value = preciseNow()) => {
    for (const id of eventIds) {
      const m = at(id);
      if (m && m[key] === undefined) m[key] = value;
    }
  };

  return {
    /** The producer's moments of one event: enqueue resolved inside its transaction, then its commit resolved. */
    produced([eventId, created, enqueued, committed]: ProducerStamp) {
      // The stamps of a producer process may arrive after the relay claimed the event.
      moments.set(eventId, { ...moments.get(eventId), created, enqueued, committed });
    },
    source(source: OutboxSource): OutboxSource {
      const wrapped: OutboxSource = {
        ...source,
        claim: async (input) => {
          const started = preciseNow();
          const events = await source.claim(input);
          claims++;
          if (events.length === 0) emptyClaims++;
          claimedEvents += events.length;
          for (const e of events) if (!moments.has(e.eventId)) moments.set(e.eventId, { created: e.createdAt.getTime() });
          const ids = events.map((e) => e.eventId);
          stamp(ids, 'claimStarted', started);
          stamp(ids, 'claimed');
          return events;
        },
        markPublished: async (eventIds) => {
          await source.markPublished(eventIds);
          stamp(eventIds, 'marked');
        },
      };
      if (source.subscribe) {
        const subscribe = source.subscribe.bind(source);
        wrapped.subscribe = async () => {
          const wakeUp = await subscribe();
          return {
            wait: async (timeoutMs, signal) => {
              const started = preciseNow();
              await wakeUp.wait(timeoutMs, signal);
              waits.push(preciseNow() - started);
            },
            close: () => wakeUp.close(),
          };
        };
      }
      return wrapped;
    },
    publisher(publisher: Publisher): Publisher {
      return {
        name: publisher.name,
        publish: async (events, signal) => {
          const outcomes = await publisher.publish(events, signal);
          stamp(
            events.filter((_, i) => outcomes[i]?.kind === 'published').map((e) => e.eventId),
            'acked',
          );
          return outcomes;
        },
      };
    },
    batch<R extends BatchResult>(handle: (events: readonly OutboxEvent[]) => Promise<R>) {
      return async (events: readonly OutboxEvent[]): Promise<R> => {
        const ids = events.map((e) => e.eventId);
        stamp(ids, 'read');
        const result = await handle(events);
        stamp(ids.slice(0, result.outcomes.length), 'applied');
        return result;
      };
    },
    summary(): StageSummary {
      const all = [...moments.values()];
      const stages = STAGES.map(({ name, from, to }) => {
        const gaps = new Float64Array(all.flatMap((m) => (m[from] !== undefined && m[to] !== undefined ? [m[to]! - m[from]!] : []))).sort();
        return gaps.length === 0
          ? { name, p50: Number.NaN, p99: Number.NaN }
          : { name, p50: quantileSorted(gaps, 0.5), p99: quantileSorted(gaps, 0.99) };
      });
      const sortedWaits = new Float64Array(waits).sort();
      return {
        stages,
        claims,
        emptyClaims,
        eventsPerClaim: claims === 0 ? 0 : claimedEvents / claims,
        idleWaits: waits.length,
        idleWaitP50: waits.length === 0 ? Number.NaN : quantileSorted(sortedWaits, 0.5),
      };
    },
  };
}

/** What {@link pipelineStages} returns. */
export type PipelineStages = ReturnType<typeof pipelineStages>;
