import { type Clock, OncelyError, systemClock } from '@oncely/core';
import {
  type ClaimedEvent,
  type NewOutboxEvent,
  type Outbox,
  type OutboxEvent,
  type OutboxSource,
  type OutboxWakeUp,
  type PreparedOutboxEvent,
  prepareOutboxEvent,
} from '@oncely/core/adapter';
import { isMemoryTransaction, type MemoryTransaction, type MemoryTransactions, memoryTransactions } from './memory-transactions.js';

/** One outbox row, as tests inspect it. */
export interface MemoryOutboxRow {
  readonly event: OutboxEvent;
  publishedAt: number | undefined;
  attempts: number;
  nextAttemptAt: number;
  leaseOwner: string | undefined;
  leaseUntil: number;
  deadLetteredAt: number | undefined;
  lastError: string | undefined;
}

/** Options of {@link memoryOutbox}. */
export interface MemoryOutboxOptions {
  /** Judges leases, delays and `createdAt` (default the system clock; a manual clock in tests). */
  readonly clock?: Clock;
  /** Adds a push wake-up (`source.subscribe`) fed by every commit, shaped like LISTEN/NOTIFY. */
  readonly wakeUps?: boolean;
  /** The transactions `enqueue` writes in; share them with a memory inbox or a test's own state. */
  readonly transactions?: MemoryTransactions;
}

/** The reference outbox: every clause of the outbox writer and source contracts, in memory. */
export interface MemoryOutbox extends Outbox<MemoryTransaction> {
  /** Where `enqueue`'s transactions come from: `outbox.transactions.transaction((tx) => outbox.enqueue(tx, event))`. */
  readonly transactions: MemoryTransactions;
  /** Enqueues `event` and commits it at once, outside any transaction: the shorthand of relay tests. */
  add<P>(event: NewOutboxEvent<P>): OutboxEvent<P>;
  /** Every committed row, oldest first. */
  readonly rows: readonly MemoryOutboxRow[];
  /** Makes the next `count` calls of `stage` throw, as a lost database connection would. */
  failNext(stage: keyof OutboxSource | 'requeue', count?: number): void;
}

/** What one transaction enqueued, applied when it commits. */
interface Staged {
  readonly events: OutboxEvent[];
  readonly lastSeq: Map<string, number>;
}

const aggregateOf = (event: { aggregateType: string; aggregateId: string }) => JSON.stringify([event.aggregateType, event.aggregateId]);

/**
 * Creates a {@link MemoryOutbox}: the semantics an adapter's outbox must have, to run relays against
 * in tests and to check the conformance suites themselves. Leases and delays are judged by `clock`;
 * transactions run one at a time, so a later enqueue of an aggregate waits for the earlier one.
 */
export function memoryOutbox(options: MemoryOutboxOptions = {}): MemoryOutbox {
  const clock = options.clock ?? systemClock;
  const transactions = options.transactions ?? memoryTransactions();
  const rows: MemoryOutboxRow[] = [];
  const lastSeq = new Map<string, number>();
  const failures = new Map<string, number>();
  const listeners = new Set<() => void>();
  const staging = new WeakMap<MemoryTransaction, Staged>();

  const check = (stage: string) => {
    const left = failures.get(stage) ?? 0;
    if (left > 0) {
      failures.set(stage, left - 1);
      throw new Error(`connection lost during ${stage}`);
    }
  };
  const leasedBy = (owner: string, eventId: string) =>
    rows.find((row) => row.event.eventId === eventId && row.leaseOwner === owner && row.leaseUntil > clock.now());
  /** Applies `change` to each event `owner` still leases and ends that lease; returns how many. */
  function endLeases<T extends { eventId: string }>(owner: string, items: readonly T[], change: (row: MemoryOutboxRow, item: T) => void): number {
    let changed = 0;
    for (const item of items) {
      const row = leasedBy(owner, item.eventId);
      if (!row) continue;
      change(row, item);
      row.leaseOwner = undefined;
      row.leaseUntil = 0;
      changed += 1;
    }
    return changed;
  }

  /** Checks `event` against what is committed and what `staged` holds; returns it as stored. */
  function accept<P>(event: PreparedOutboxEvent, staged: Staged | undefined): OutboxEvent<P> | OncelyError {
    if (rows.some((row) => row.event.eventId === event.eventId) || staged?.events.some((e) => e.eventId === event.eventId)) {
      return new OncelyError('duplicate_event', `oncely/memory: an event with the eventId ${event.eventId} is already in the outbox`);
    }
    const key = aggregateOf(event);
    const last = staged?.lastSeq.get(key) ?? lastSeq.get(key) ?? 0;
    if (event.aggregateSeq !== undefined && event.aggregateSeq <= last) {
      return new OncelyError('outbox_sequence_conflict', `oncely/memory: aggregateSeq ${event.aggregateSeq} is not above ${last}`);
    }
    return {
      eventId: event.eventId,
      aggregateType: event.aggregateType,
      aggregateId: event.aggregateId,
      aggregateSeq: event.aggregateSeq ?? last + 1,
      eventType: event.eventType,
      payload: JSON.parse(event.payloadJson) as P,
      createdAt: new Date(clock.now()),
      ...(event.headers === undefined ? {} : { headers: event.headers }),
    };
  }

  function commit(events: readonly OutboxEvent[]): void {
    for (const event of events) {
      lastSeq.set(aggregateOf(event), event.aggregateSeq);
      rows.push({
        // A copy of its own: what the caller got back is not what relays claim.
        event: { ...event, payload: JSON.parse(JSON.stringify(event.payload)) },
        publishedAt: undefined,
        attempts: 0,
        nextAttemptAt: event.createdAt.getTime(),
        leaseOwner: undefined,
        leaseUntil: 0,
        deadLetteredAt: undefined,
        lastError: undefined,
      });
    }
    if (events.length > 0) for (const listener of listeners) listener();
  }

  const source: OutboxSource = {
    name: 'memory',
    async claim({ owner, limit, leaseMs }) {
      check('claim');
      const now = clock.now();
      // Each aggregate's unpublished rows in sequence order, aggregates by their oldest row.
      const pending = new Map<string, MemoryOutboxRow[]>();
      for (const row of rows) {
        if (row.publishedAt !== undefined) continue;
        const key = aggregateOf(row.event);
        pending.set(key, [...(pending.get(key) ?? []), row]);
      }
      const claimable: MemoryOutboxRow[] = [];
      for (const list of pending.values()) {
        list.sort((a, b) => a.event.aggregateSeq - b.event.aggregateSeq);
        for (const row of list) {
          if (claimable.length >= limit) break;
          if (row.deadLetteredAt !== undefined || row.nextAttemptAt > now || row.leaseUntil > now) break;
          claimable.push(row);
        }
      }
      return claimable.map((row): ClaimedEvent => {
        row.attempts += 1;
        row.leaseOwner = owner;
        row.leaseUntil = now + leaseMs;
        return { ...row.event, attempt: row.attempts };
      });
    },
    async markPublished(eventIds) {
      check('markPublished');
      for (const row of rows) {
        if (eventIds.includes(row.event.eventId) && row.publishedAt === undefined) {
          row.publishedAt = clock.now();
          row.leaseOwner = undefined;
          row.leaseUntil = 0;
        }
      }
    },
    async reschedule({ owner, retries }) {
      check('reschedule');
      return endLeases(owner, retries, (row, retry) => {
        row.nextAttemptAt = clock.now() + retry.delayMs;
        row.lastError = retry.error;
      });
    },
    async deadLetter({ owner, letters }) {
      check('deadLetter');
      return endLeases(owner, letters, (row, letter) => {
        row.deadLetteredAt = clock.now();
        row.lastError = letter.error;
      });
    },
    async release({ owner, eventIds }) {
      check('release');
      return endLeases(owner, eventIds.map((eventId) => ({ eventId })), (row) => {
        row.attempts -= 1;
      });
    },
    async stats() {
      check('stats');
      const unpublished = rows.filter((row) => row.publishedAt === undefined);
      const oldest = Math.min(...unpublished.map((row) => row.event.createdAt.getTime()));
      return {
        unpublished: unpublished.length,
        oldestUnpublishedAgeMs: unpublished.length === 0 ? 0 : clock.now() - oldest,
        deadLettered: unpublished.filter((row) => row.deadLetteredAt !== undefined).length,
      };
    },
    async purgePublished({ olderThanMs, limit }) {
      check('purgePublished');
      const cutoff = clock.now() - olderThanMs;
      const doomed = rows.filter((row) => row.publishedAt !== undefined && row.publishedAt < cutoff).slice(0, limit);
      for (const row of doomed) rows.splice(rows.indexOf(row), 1);
      return doomed.length;
    },
  };
  if (options.wakeUps) source.subscribe = async () => wakeUp(listeners, clock);

  return {
    source,
    rows,
    transactions,
    async enqueue<P>(tx: MemoryTransaction, input: NewOutboxEvent<P>): Promise<OutboxEvent<P>> {
      const prepared = prepareOutboxEvent(input);
      if (!isMemoryTransaction(tx)) {
        throw new OncelyError('invalid_state', 'oncely/memory: enqueue needs the transaction (tx) to write in');
      }
      tx.assertOpen();
      let staged = staging.get(tx);
      if (!staged) {
        const fresh: Staged = { events: [], lastSeq: new Map() };
        staged = fresh;
        staging.set(tx, fresh);
        tx.onCommit(() => commit(fresh.events));
      }
      const event = accept<P>(prepared, staged);
      // Like a unique-key violation in a database: the transaction is doomed and must roll back.
      if (event instanceof OncelyError) tx.fail(event);
      staged.events.push(event);
      staged.lastSeq.set(aggregateOf(event), event.aggregateSeq);
      return { ...event, payload: JSON.parse(JSON.stringify(event.payload)) as P };
    },
    add<P>(input: NewOutboxEvent<P>): OutboxEvent<P> {
      const event = accept<P>(prepareOutboxEvent(input), undefined);
      if (event instanceof OncelyError) throw event;
      commit([event]);
      return event;
    },
    async requeue(eventIds) {
      check('requeue');
      let changed = 0;
      for (const row of rows) {
        if (!eventIds.includes(row.event.eventId) || row.deadLetteredAt === undefined || row.publishedAt !== undefined) continue;
        row.deadLetteredAt = undefined;
        row.attempts = 0;
        row.nextAttemptAt = clock.now();
        changed += 1;
      }
      return changed;
    },
    failNext(stage, count = 1) {
      failures.set(stage, count);
    },
  };
}

/** A wake-up fed by commits, shaped like LISTEN/NOTIFY: a notification between waits is not lost. */
function wakeUp(listeners: Set<() => void>, clock: Clock): OutboxWakeUp {
  let pending = false;
  let notify: (() => void) | undefined;
  const onEnqueue = () => {
    pending = true;
    notify?.();
  };
  listeners.add(onEnqueue);
  return {
    async wait(timeoutMs, signal) {
      if (!pending) {
        const timer = new AbortController();
        const stop = () => timer.abort();
        notify = stop;
        signal.addEventListener('abort', stop, { once: true });
        await clock.sleep(timeoutMs, timer.signal).catch(() => undefined);
        signal.removeEventListener('abort', stop);
        notify = undefined;
      }
      pending = false;
    },
    async close() {
      listeners.delete(onEnqueue);
    },
  };
}
