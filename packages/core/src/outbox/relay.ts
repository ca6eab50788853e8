import { corruptRecord, OncelyError, StorageError, toStorageError } from '../errors.js';
import { eventEmitter } from '../events.js';
import { backgroundLoop, type LoopStatus } from '../loop/background-loop.js';
import { fullJitter } from '../retry/full-jitter.js';
import { storageGuard } from '../storage/storage-call.js';
import { aggregateOf, checkedClaim, claimMisfit } from './claimed-events.js';
import type { ClaimedEvent } from './outbox-event.js';
import type { OutboxWakeUp } from './outbox-source.js';
import type { PublishOutcome } from './publisher.js';
import type { RelayEvent, RelayStage } from './relay-events.js';
import { type RelayOptions, resolveRelayOptions } from './relay-options.js';

/** Where a relay is in its life: `idle` until `start()`, `stopped` for good after `stop()`. */
export type RelayStatus = LoopStatus;

/** What one claim-publish-mark round did. */
export interface RelayBatch {
  readonly claimed: number;
  readonly published: number;
  /** Failed and rescheduled with backoff. */
  readonly rescheduled: number;
  readonly deadLettered: number;
  /** Handed back unattempted: the relay was stopping, or an earlier event of the aggregate failed. */
  readonly released: number;
  /** Taken over by another relay after this one's lease lapsed. */
  readonly leaseLost: number;
}

/** A running outbox relay: claims due events, publishes them, marks them published. */
export interface Relay {
  /** The lease owner name this relay claims under. */
  readonly id: string;
  readonly status: RelayStatus;
  /** Starts the loop in the background; events report what it does. Throws `invalid_state` unless idle. */
  start(): void;
  /**
   * Stops gracefully: the batch in flight finishes (published events are marked, failed ones
   * rescheduled); after `timeoutMs` (default 10 000) the publish is aborted and unconfirmed events are
   * released, unattempted, for another relay. Resolves when the loop has ended.
   */
  stop(options?: { readonly timeoutMs?: number }): Promise<void>;
  /**
   * One round without the loop, for tests, cron jobs and serverless functions: claim, publish, mark.
   * Storage failures reject with a `StorageError`. Throws `invalid_state` unless the relay is idle.
   */
  runOnce(): Promise<RelayBatch>;
}

/** Exponents past this only ever hit the cap; bounding them keeps `2 ** attempt` finite. */
const MAX_EXPONENT = 30;
const ignore = () => undefined;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Creates an outbox relay. Several relays may run against one outbox: the source's claim hands each
 * aggregate's next unpublished events to one relay at a time, under a lease, so events of an
 * aggregate are first published in `aggregateSeq` order. When one event of an aggregate fails, the
 * later events of that aggregate in the batch are released unattempted, to follow it. Delivery is at-least-once: a relay that dies
 * between the broker's acknowledgement and the mark leaves the event to be published again after its
 * lease lapses, so consumers deduplicate by `eventId` (an inbox) for an effectively-once effect.
 *
 * Failed publishes are retried after `fullJitter(attempt - 1, backoff)`; after `maxAttempts` the event
 * is dead-lettered and holds back the later events of its aggregate, so order is never broken.
 *
 * ```ts
 * const relay = createRelay({ source: outbox.source, publisher: redisStreamPublisher({ client, stream: 'orders' }) });
 * relay.start();
 * process.on('SIGTERM', () => relay.stop());
 * ```
 */
export function createRelay(options: RelayOptions): Relay {
  const config = resolveRelayOptions(options);
  const { source, publisher, clock, random, id, maxAttempts, backoff } = config;
  let releasedOnStop = 0;
  // Aborted when stop()'s grace period ends: gives up on the publish in flight.
  const hardStop = new AbortController();

  const emit = eventEmitter<RelayEvent, 'relayId'>(config.onEvent, clock, { relayId: id });
  const storageCall = storageGuard(source.name);
  const describe = (event: ClaimedEvent) => ({
    eventId: event.eventId,
    aggregateType: event.aggregateType,
    eventType: event.eventType,
    attempt: event.attempt,
  });

  /** Runs a bookkeeping write; on failure the leases lapse and another claim retries, so report and go on. */
  async function bookkeeping<T>(stage: RelayStage, fallback: T, call: () => Promise<T>): Promise<T> {
    try {
      return await storageCall(`outbox.${stage}`, call);
    } catch (error) {
      emit({ type: 'relay_error', stage, error, retryInMs: config.leaseMs });
      return fallback;
    }
  }

  async function publish(events: readonly ClaimedEvent[]): Promise<readonly PublishOutcome[]> {
    const controller = new AbortController();
    const timer = new AbortController();
    const onStop = () => controller.abort(new OncelyError('aborted', 'oncely: the relay stopped before the broker answered'));
    hardStop.signal.addEventListener('abort', onStop, { once: true });
    if (hardStop.signal.aborted) onStop();
    clock.sleep(config.publishTimeoutMs, timer.signal).then(
      () =>
        controller.abort(
          new OncelyError('attempt_timeout', `oncely: the broker did not answer within ${config.publishTimeoutMs} ms`),
        ),
      ignore,
    );
    // A publisher that ignores its signal must not hold the relay past the timeout.
    const aborted = new Promise<never>((_, reject) =>
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }),
    );
    try {
      const outcomes = await Promise.race([publisher.publish(events, controller.signal), aborted]);
      if (!Array.isArray(outcomes) || outcomes.length !== events.length) {
        const error = new OncelyError(
          'invalid_state',
          `oncely: publisher ${publisher.name} must answer one outcome per event (${events.length})`,
        );
        return events.map(() => ({ kind: 'failed', error }));
      }
      return outcomes;
    } catch (error) {
      return events.map(() => ({ kind: 'failed', error }));
    } finally {
      timer.abort();
      hardStop.signal.removeEventListener('abort', onStop);
    }
  }

  async function cycle(stopping: () => boolean): Promise<RelayBatch> {
    const input = { owner: id, limit: config.batchSize, leaseMs: config.leaseMs };
    // Checked inside the storage call: an answer outside the contract is a corrupt_record, and nothing is published.
    const claimed = await storageCall('outbox.claim', async () => checkedClaim(await source.claim(input)));
    const batch: Mutable<RelayBatch> = {
      claimed: claimed.length,
      published: 0,
      rescheduled: 0,
      deadLettered: 0,
      released: 0,
      leaseLost: 0,
    };
    if (claimed.length === 0) return batch;
    if (stopping()) {
      batch.released = await release(claimed, batch, true);
      return batch;
    }
    const misfit = claimMisfit(claimed, input);
    if (misfit) {
      // Released first, so a wrong batch leaves no event leased to a relay that will not publish it.
      await release(claimed, batch, false);
      throw new StorageError(source.name, 'outbox.claim', corruptRecord(`the outbox claim answered ${misfit}`), 'corrupt_record');
    }
    // Aggregates with an earlier event that does not go out in this batch: their later events wait for it.
    const blocked = new Set<string>();
    const letters: { event: ClaimedEvent; error: unknown }[] = [];
    const ready: ClaimedEvent[] = [];
    const held: ClaimedEvent[] = [];
    for (const event of claimed) {
      if (blocked.has(aggregateOf(event))) held.push(event);
      else if (event.attempt > maxAttempts) {
        // An attempt count past the limit means earlier attempts died with their relay: do not try again.
        blocked.add(aggregateOf(event));
        letters.push({
          event,
          error: new OncelyError('attempt_timeout', `oncely: ${maxAttempts} attempts ended without an answer (relay crashes or stalls)`),
        });
      } else ready.push(event);
    }
    const outcomes = ready.length > 0 ? await publish(ready) : [];
    const published: ClaimedEvent[] = [];
    const retries: { event: ClaimedEvent; error: unknown; delayMs: number }[] = [];
    const unconfirmed: ClaimedEvent[] = [];
    for (const [index, event] of ready.entries()) {
      const outcome = outcomes[index]!;
      // An acknowledged publish is a fact, whatever failed before it.
      if (outcome.kind === 'published') published.push(event);
      else if (blocked.has(aggregateOf(event))) held.push(event);
      else {
        blocked.add(aggregateOf(event));
        if (hardStop.signal.aborted) unconfirmed.push(event);
        else if (event.attempt >= maxAttempts) letters.push({ event, error: outcome.error });
        else {
          const delayMs = fullJitter(Math.min(event.attempt - 1, MAX_EXPONENT), backoff, random);
          retries.push({ event, error: outcome.error, delayMs });
        }
      }
    }

    if (published.length > 0) {
      const marked = await bookkeeping('markPublished', false, async () => {
        await source.markPublished(published.map((event) => event.eventId));
        return true;
      });
      if (marked) {
        batch.published = published.length;
        const now = clock.now();
        // One literal per event, no spread: this runs for every event a relay publishes.
        for (const event of published) {
          const { eventId, aggregateType, eventType, attempt } = event;
          emit({ type: 'outbox_published', eventId, aggregateType, eventType, attempt, lagMs: now - event.createdAt.getTime() });
        }
      }
    }
    if (retries.length > 0) {
      const changed = await bookkeeping('reschedule', 0, () =>
        source.reschedule({
          owner: id,
          retries: retries.map(({ event, error, delayMs }) => ({ eventId: event.eventId, delayMs, error: messageOf(error) })),
        }),
      );
      batch.rescheduled = changed;
      lost(batch, 'reschedule', retries.length, changed);
      for (const { event, error, delayMs } of retries) {
        emit({ type: 'outbox_publish_failed', ...describe(event), retryInMs: delayMs, error });
      }
    }
    if (letters.length > 0) {
      const parked = await bookkeeping('deadLetter', 0, () =>
        source.deadLetter({
          owner: id,
          letters: letters.map(({ event, error }) => ({ eventId: event.eventId, error: messageOf(error) })),
        }),
      );
      batch.deadLettered = parked;
      lost(batch, 'deadLetter', letters.length, parked);
      for (const { event, error } of letters) emit({ type: 'outbox_dead_lettered', ...describe(event), error });
    }
    if (unconfirmed.length > 0) batch.released += await release(unconfirmed, batch, true);
    if (held.length > 0) batch.released += await release(held, batch, hardStop.signal.aborted);
    return batch;
  }

  function lost(batch: Mutable<RelayBatch>, stage: 'reschedule' | 'deadLetter' | 'release', asked: number, done: number) {
    if (done >= asked) return;
    batch.leaseLost += asked - done;
    emit({ type: 'outbox_lease_lost', stage, count: asked - done });
  }

  async function release(events: readonly ClaimedEvent[], batch: Mutable<RelayBatch>, onStop: boolean): Promise<number> {
    const released = await bookkeeping('release', 0, () =>
      source.release({ owner: id, eventIds: events.map((event) => event.eventId) }),
    );
    lost(batch, 'release', events.length, released);
    if (onStop) releasedOnStop += released;
    return released;
  }

  async function housekeeping(due: { stats: number; purge: number }): Promise<void> {
    const now = clock.now();
    if (config.statsIntervalMs > 0 && now >= due.stats) {
      due.stats = now + config.statsIntervalMs;
      const stats = await bookkeeping('stats', undefined, () => source.stats());
      if (stats) emit({ type: 'outbox_stats', ...stats });
    }
    if (config.purge && now >= due.purge) {
      const { retainMs, intervalMs, limit } = config.purge;
      due.purge = now + intervalMs;
      const count = await bookkeeping('purgePublished', undefined, () => source.purgePublished({ olderThanMs: retainMs, limit }));
      if (count !== undefined) emit({ type: 'outbox_purged', count });
    }
  }

  /** Opens the source's wake-up if it has one; without it (or while it fails) the relay polls. */
  async function subscribe(): Promise<OutboxWakeUp | undefined> {
    if (!source.subscribe) return undefined;
    try {
      return await source.subscribe();
    } catch (error) {
      emit({
        type: 'relay_error',
        stage: 'subscribe',
        error: toStorageError(source.name, 'outbox.subscribe', error),
        retryInMs: config.errorBackoff.capMs,
      });
      return undefined;
    }
  }

  // The loop's state between rounds: the wake-up, when to try subscribing again, housekeeping deadlines.
  let wakeUp: OutboxWakeUp | undefined;
  let resubscribeAt = 0;
  const due = { stats: 0, purge: 0 };

  /** Waits for new events after a round that claimed none: a wake-up if there is one, else the poll interval. */
  async function idle(): Promise<void> {
    if (!wakeUp && source.subscribe && clock.now() >= resubscribeAt) {
      resubscribeAt = clock.now() + config.errorBackoff.capMs;
      wakeUp = await subscribe();
    }
    if (!wakeUp) return loop.pause(config.pollIntervalMs);
    try {
      await wakeUp.wait(config.pollIntervalMs, loop.stopSignal);
    } catch (error) {
      // A wake-up that breaks its promise never to reject is dropped: the relay polls instead.
      emit({ type: 'relay_error', stage: 'subscribe', error, retryInMs: config.pollIntervalMs });
      await wakeUp.close().catch(ignore);
      wakeUp = undefined;
    }
  }

  const loop = backgroundLoop({
    label: `oncely: relay ${id}`,
    kind: 'relay',
    clock,
    random,
    backoff: config.errorBackoff,
    async beforeRounds() {
      wakeUp = await subscribe();
      resubscribeAt = clock.now() + config.errorBackoff.capMs;
      due.stats = due.purge = clock.now();
    },
    async round() {
      await housekeeping(due);
      const batch = await cycle(() => loop.status !== 'running');
      if (batch.claimed === 0 && loop.status === 'running') await idle();
    },
    // Only the claim can fail a round: every bookkeeping write reports its own failure and goes on.
    onFailure: (error, retryInMs) => emit({ type: 'relay_error', stage: 'claim', error, retryInMs }),
    async afterRounds() {
      await wakeUp?.close().catch(ignore);
      emit({ type: 'relay_stopped', released: releasedOnStop });
    },
  });

  return {
    id,
    get status() {
      return loop.status;
    },
    start() {
      loop.assertIdle('start');
      // Reported before the loop's first step, which may already report a failed subscribe.
      emit({ type: 'relay_started' });
      void loop.start();
    },
    async stop(stopOptions = {}) {
      const timeoutMs = stopOptions.timeoutMs ?? 10_000;
      const grace = new AbortController();
      if (loop.status === 'running') clock.sleep(timeoutMs, grace.signal).then(() => hardStop.abort(), ignore);
      await loop.stop();
      grace.abort();
    },
    async runOnce() {
      loop.assertIdle('runOnce');
      return cycle(() => false);
    },
  };
}

/** Keeps what an operator needs from a failure, bounded so one huge message cannot bloat the outbox. */
function messageOf(error: unknown): string {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return message.slice(0, 2_000);
}
