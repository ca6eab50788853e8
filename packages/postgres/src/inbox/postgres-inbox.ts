import { type Clock, type EventListener, OncelyError, systemClock } from '@oncely/core';
import {
  assertInboxInput,
  eventEmitter,
  type Inbox,
  type InboxEvent,
  type InboxInput,
  type InboxOutcome,
  type PurgeProcessedInput,
  storageGuard,
  storageTransaction,
} from '@oncely/core/adapter';
import type { PostgresDb, PostgresTx } from '../driver/postgres-db.js';
import { type SqlDriverOptions, sqlDriver } from '../driver/sql-driver.js';
import { prepared } from '../sql/prepared.js';
import { qualifiedName, type QuotedIdentifier } from '../identifiers/identifier.js';
import { inboxStatements } from './inbox-statements.js';
import type { TransactionBridge } from '../bridge/transaction-bridge.js';
import { bridgeTxDriver, ownTxDriver, type TxDriver } from '../driver/tx-driver.js';

/** The table `migrate()` creates for the inbox unless told otherwise. */
export const DEFAULT_INBOX_TABLE = 'oncely_inbox';

/** Options of {@link postgresInbox}, with oncely's own driver or a bridge. */
interface InboxTableOptions {
  /** Inbox table (default `oncely_inbox`). */
  readonly table?: string;
  /** Schema of that table (default `public`). */
  readonly schema?: string;
  /** Told about every duplicate detected, per consumer. */
  readonly onEvent?: EventListener<InboxEvent>;
  /** Stamps the events (default the system clock); record ages are judged by the database clock. */
  readonly clock?: Clock;
}

/** Options of {@link postgresInbox} on oncely's own driver. */
export interface PostgresInboxOptions extends SqlDriverOptions, InboxTableOptions {
  /** A `pg.Pool`, a connected `pg.Client` or a PGlite instance; the inbox never closes it. */
  readonly db: PostgresDb;
  readonly bridge?: undefined;
}

/** Options of {@link postgresInbox} through an ORM: `process` takes, and `fn` gets, the ORM's transaction. */
export interface BridgedInboxOptions<Db, Tx> extends InboxTableOptions {
  /** The ORM's database object; the inbox never closes it. */
  readonly db: Db;
  /** How oncely's statements and transactions go through the ORM. */
  readonly bridge: TransactionBridge<Db, Tx>;
}

/** A PostgreSQL inbox (processed-messages table) for idempotent consumers. */
export interface PostgresInbox<Tx = PostgresTx> extends Inbox<Tx> {
  /** The quoted `"schema"."table"` it writes. */
  readonly table: QuotedIdentifier;
  /**
   * Inserts `(consumer, eventId)` first in your transaction `tx`; if the pair is new, runs `fn(tx)`
   * and resolves `processed`, otherwise runs nothing and resolves `duplicate`. The row and `fn`'s
   * writes commit or roll back together: throw from `fn` (or roll back) and a redelivery applies the
   * event again. A concurrent delivery of the same event waits on the primary key, then sees
   * `duplicate` if the first one committed.
   */
  process(tx: Tx, input: InboxInput, fn: (tx: Tx) => Promise<unknown>): Promise<InboxOutcome>;
  /** {@link process} in a transaction of its own on `db`: commits when `fn` resolves, rolls back when it throws. */
  run(input: InboxInput, fn: (tx: Tx) => Promise<unknown>): Promise<InboxOutcome>;
  /**
   * Applies a batch of events for `consumer` in one transaction, in order: one inbox row per event,
   * each event's `fn` only when its row is new. When an event's `fn` throws, the transaction rolls
   * back and the events before it run again without it, so they commit and only it (and what follows
   * it, which must wait for it) is left for a redelivery. Resolves the outcomes of the committed
   * events and, if one failed, its index and error. Refuses a malformed id before touching storage.
   */
  runBatch(consumer: string, items: readonly InboxBatchItem<Tx>[]): Promise<InboxBatchResult>;
  /**
   * Deletes up to `limit` rows recorded more than `olderThanMs` ago (database clock); returns how
   * many. Keep rows at least as long as an event can be redelivered (relay leases, stream retention,
   * consumer downtime): after that, a late redelivery is applied again.
   */
  purgeProcessed(input: PurgeProcessedInput): Promise<number>;
}

/**
 * An {@link Inbox} on PostgreSQL, in the table `migrate()` creates (`sql/0003_inbox.sql`). Deliveries
 * stay at-least-once; the effect on the state your transaction covers is effectively once.
 *
 * ```ts
 * const inbox = postgresInbox({ db: pool });
 * await inbox.run({ consumer: 'billing', eventId: event.eventId }, (tx) =>
 *   tx.query('UPDATE accounts SET balance = balance + $1 WHERE id = $2', [event.payload.amount, event.aggregateId]));
 * ```
 */
/** One event of {@link PostgresInbox.runBatch}. */
export interface InboxBatchItem<Tx = PostgresTx> {
  readonly eventId: string;
  readonly fn: (tx: Tx) => Promise<unknown>;
}

/** What {@link PostgresInbox.runBatch} committed: outcomes of the first `outcomes.length` events, and the one that failed. */
export interface InboxBatchResult {
  readonly outcomes: readonly InboxOutcome[];
  readonly failed?: { readonly index: number; readonly error: unknown };
}

export function postgresInbox(options: PostgresInboxOptions): PostgresInbox;
export function postgresInbox<Db, Tx>(options: BridgedInboxOptions<Db, Tx>): PostgresInbox<Tx>;
export function postgresInbox<Db, Tx>(options: PostgresInboxOptions | BridgedInboxOptions<Db, Tx>): PostgresInbox<Tx> {
  const table = qualifiedName(options.schema ?? 'public', options.table ?? DEFAULT_INBOX_TABLE);
  const own = options.bridge === undefined ? sqlDriver(options.db as PostgresDb, options as PostgresInboxOptions) : undefined;
  const driver = (own ? ownTxDriver(own) : bridgeTxDriver(options.db as Db, (options as BridgedInboxOptions<Db, Tx>).bridge)) as TxDriver<Tx>;
  const sql = prepared(inboxStatements(table));
  const storageCall = storageGuard('postgres');
  const emit = eventEmitter<InboxEvent>(options.onEvent, options.clock ?? systemClock);

  async function process(tx: Tx, input: InboxInput, fn: (tx: Tx) => Promise<unknown>): Promise<InboxOutcome> {
    assertInboxInput(input);
    if (!driver.isTx(tx)) {
      throw new OncelyError('invalid_state', 'oncely/postgres: inbox.process needs the transaction handle (tx) to write in');
    }
    const { rowCount } = await storageCall('inbox.process', () => driver.on(tx).query(sql.record, [input.consumer, input.eventId]));
    if (rowCount === 0) {
      // A safe emitter: a failing metrics sink must not turn a duplicate into a failure (and a redelivery loop).
      emit({ type: 'inbox_duplicate', consumer: input.consumer, eventId: input.eventId });
      return 'duplicate';
    }
    await fn(tx);
    return 'processed';
  }

  const inTransaction = <T>(work: (tx: Tx) => Promise<T>) =>
    driver.transaction(async (tx) => ({ action: 'commit' as const, value: await work(tx) }));

  /** The batch's inbox rows in one statement, then each new event's `fn` in order; `at.index` follows the fn running. */
  async function applyBatch(tx: Tx, consumer: string, items: readonly InboxBatchItem<Tx>[], at: { index: number }): Promise<InboxOutcome[]> {
    const { rows } = await storageCall('inbox.runBatch', () =>
      driver.on(tx).query<{ event_id: string }>(sql.recordMany, [consumer, items.map((item) => item.eventId)]),
    );
    // An id the batch holds twice is new at its first place only.
    const fresh = new Set(rows.map((row) => row.event_id));
    const done: InboxOutcome[] = [];
    for (const [index, item] of items.entries()) {
      if (!fresh.delete(item.eventId)) {
        emit({ type: 'inbox_duplicate', consumer, eventId: item.eventId });
        done.push('duplicate');
        continue;
      }
      at.index = index;
      await item.fn(tx);
      at.index = -1;
      done.push('processed');
    }
    return done;
  }

  async function runBatch(consumer: string, items: readonly InboxBatchItem<Tx>[]): Promise<InboxBatchResult> {
    for (const item of items) assertInboxInput({ consumer, eventId: item?.eventId });
    let failed: InboxBatchResult['failed'];
    // Each pass commits a prefix, or finds an earlier failure and tries again without it.
    for (let end = items.length; end > 0; ) {
      const at = { index: -1 };
      try {
        const outcomes = await storageTransaction('postgres', 'inbox.runBatch', inTransaction<InboxOutcome[]>, (tx: Tx) =>
          applyBatch(tx, consumer, items.slice(0, end), at),
        );
        return failed ? { outcomes, failed } : { outcomes };
      } catch (error) {
        // BEGIN, the rows' statement or COMMIT failing is a storage failure of the whole batch.
        if (at.index < 0) throw error;
        failed = { index: at.index, error };
        end = at.index;
      }
    }
    return failed ? { outcomes: [], failed } : { outcomes: [] };
  }

  return {
    table,
    process,
    runBatch,
    // fn's own errors pass through untouched; BEGIN or COMMIT failing is a storage failure.
    run: (input, fn) =>
      storageTransaction(
        'postgres',
        'inbox.run',
        inTransaction<InboxOutcome>,
        (tx) => process(tx, input, fn),
      ),
    purgeProcessed: ({ olderThanMs, limit }) =>
      storageCall('inbox.purgeProcessed', async () => (await driver.query(sql.purge, [olderThanMs, limit])).rowCount),
  };
}
