import {
  type ClaimedEvent,
  type Clock,
  type NewOutboxEvent,
  type OutboxEvent,
  type OutboxSource,
  type OutboxWakeUp,
  prepareOutboxEvent,
} from '../../src/index.js';

/** One outbox row, as the tests inspect it. */
export interface MemoryRow {
  readonly event: OutboxEvent;
  publishedAt: number | undefined;
  attempts: number;
  nextAttemptAt: number;
  leaseOwner: string | undefined;
  leaseUntil: number;
  deadLetteredAt: number | undefined;
  lastError: string | undefined;
}

/** An in-memory outbox for tests: the reference semantics of an {@link OutboxSource}. */
export interface MemoryOutbox {
  enqueue(event: NewOutboxEvent): OutboxEvent;
  readonly source: OutboxSource;
  readonly rows: readonly MemoryRow[];
  /** Makes the next `count` calls of `stage` throw, as a lost database connection would. */
  failNext(stage: keyof OutboxSource, count?: number): void;
}

/** Creates a {@link MemoryOutbox} judging leases and delays by `clock`; `wakeUps` adds a push wake-up. */
export function memoryOutbox(clock: Clock, options: { wakeUps?: boolean } = {}): MemoryOutbox {
  const rows: MemoryRow[] = [];
  const lastSeq = new Map<string, number>();
  const failures = new Map<string, number>();
  const listeners = new Set<() => void>();
  const aggregateOf = (event: OutboxEvent) => JSON.stringify([event.aggregateType, event.aggregateId]);

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
  function endLeases<T extends { eventId: string }>(owner: string, items: readonly T[], change: (row: MemoryRow, item: T) => void): number {
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

  const source: OutboxSource = {
    name: 'memory',
    async claim({ owner, limit, leaseMs }) {
      check('claim');
      const now = clock.now();
      const heads = new Map<string, MemoryRow>();
      for (const row of rows) {
        if (row.publishedAt !== undefined) continue;
        const key = aggregateOf(row.event);
        const head = heads.get(key);
        if (!head || row.event.aggregateSeq < head.event.aggregateSeq) heads.set(key, row);
      }
      const claimable = [...heads.values()]
        .filter((row) => row.deadLetteredAt === undefined && row.nextAttemptAt <= now && row.leaseUntil <= now)
        .slice(0, limit);
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
    enqueue(input) {
      const prepared = prepareOutboxEvent(input);
      const key = JSON.stringify([prepared.aggregateType, prepared.aggregateId]);
      const seq = prepared.aggregateSeq ?? (lastSeq.get(key) ?? 0) + 1;
      lastSeq.set(key, seq);
      const event: OutboxEvent = {
        eventId: prepared.eventId,
        aggregateType: prepared.aggregateType,
        aggregateId: prepared.aggregateId,
        aggregateSeq: seq,
        eventType: prepared.eventType,
        payload: JSON.parse(prepared.payloadJson),
        createdAt: new Date(clock.now()),
      };
      rows.push({
        event,
        publishedAt: undefined,
        attempts: 0,
        nextAttemptAt: clock.now(),
        leaseOwner: undefined,
        leaseUntil: 0,
        deadLetteredAt: undefined,
        lastError: undefined,
      });
      for (const listener of listeners) listener();
      return event;
    },
    failNext(stage, count = 1) {
      failures.set(stage, count);
    },
  };
}

/** A wake-up fed by enqueue, shaped like LISTEN/NOTIFY: a notification between waits is not lost. */
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
