import { type ClaimedEvent, type OutboxSource, storageGuard } from '@oncely/core/adapter';
import type { PostgresTx } from '../driver/postgres-db.js';
import type { OutboxStatements } from './outbox-statements.js';

/** A claimed row as the claim statement returns it. */
interface EventRow {
  readonly event_id: string;
  readonly aggregate_type: string;
  readonly aggregate_id: string;
  readonly aggregate_seq: number;
  readonly event_type: string;
  readonly payload: string;
  readonly created_ms: number;
  readonly attempts: number;
  readonly headers: string | null;
}

/** What every relay write answers: how many events it changed. */
export interface ChangedRow {
  readonly changed: number;
}

/** The count a relay write answers. */
export const changedOf = (rows: readonly ChangedRow[]) => Number(rows[0]?.changed ?? 0);

/** A batch in the order the publisher gets it: aggregate by aggregate, each in sequence order. */
const bySequence = (a: ClaimedEvent, b: ClaimedEvent) =>
  a.aggregateType < b.aggregateType ? -1 : a.aggregateType > b.aggregateType ? 1
  : a.aggregateId < b.aggregateId ? -1 : a.aggregateId > b.aggregateId ? 1
  : a.aggregateSeq - b.aggregateSeq;

interface StatsRow {
  readonly unpublished: number;
  readonly dead_lettered: number;
  readonly oldest_ms: number;
}

const toClaimed = (row: EventRow): ClaimedEvent => ({
  eventId: row.event_id,
  aggregateType: row.aggregate_type,
  aggregateId: row.aggregate_id,
  aggregateSeq: Number(row.aggregate_seq),
  eventType: row.event_type,
  payload: JSON.parse(row.payload),
  createdAt: new Date(Number(row.created_ms)),
  attempt: Number(row.attempts),
  ...(row.headers === null ? {} : { headers: JSON.parse(row.headers) as Record<string, string> }),
});

/** Every failure leaves as a StorageError naming the outbox step, so relays report and fail closed. */
const storageCall = storageGuard('postgres');

/**
 * The relay side of a PostgreSQL outbox: every method is one statement on the database clock
 * (`driver` runs it outside any transaction). The outbox adds `subscribe` where it can LISTEN.
 */
export function postgresSource(driver: PostgresTx, sql: OutboxStatements): OutboxSource {
  const source: OutboxSource = {
    name: 'postgres',
    async claim({ owner, limit, leaseMs }) {
      return storageCall('outbox.claim', async () => {
        const { rows } = await driver.query<EventRow>(sql.claim, [owner, limit, leaseMs]);
        // RETURNING order is unspecified: hand each aggregate's events over in sequence order.
        return rows.map(toClaimed).sort(bySequence);
      });
    },
    async markPublished(eventIds) {
      await storageCall('outbox.markPublished', () => driver.query<ChangedRow>(sql.markPublished, [eventIds]));
    },
    async reschedule({ owner, retries }) {
      const params = [owner, retries.map((r) => r.eventId), retries.map((r) => r.delayMs), retries.map((r) => r.error)];
      const { rows } = await storageCall('outbox.reschedule', () => driver.query<ChangedRow>(sql.reschedule, params));
      return changedOf(rows);
    },
    async deadLetter({ owner, letters }) {
      const params = [owner, letters.map((l) => l.eventId), letters.map((l) => l.error)];
      const { rows } = await storageCall('outbox.deadLetter', () => driver.query<ChangedRow>(sql.deadLetter, params));
      return changedOf(rows);
    },
    async release({ owner, eventIds }) {
      const { rows } = await storageCall('outbox.release', () => driver.query<ChangedRow>(sql.release, [owner, eventIds]));
      return changedOf(rows);
    },
    async stats() {
      const { rows } = await storageCall('outbox.stats', () => driver.query<StatsRow>(sql.stats));
      const row = rows[0];
      return {
        unpublished: Number(row?.unpublished ?? 0),
        oldestUnpublishedAgeMs: Math.max(0, Number(row?.oldest_ms ?? 0)),
        deadLettered: Number(row?.dead_lettered ?? 0),
      };
    },
    async purgePublished({ olderThanMs, limit }) {
      const { rowCount } = await storageCall('outbox.purgePublished', () => driver.query(sql.purgePublished, [olderThanMs, limit]));
      return rowCount;
    },
  };
  return source;
}
