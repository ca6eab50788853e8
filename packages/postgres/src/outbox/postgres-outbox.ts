import { OncelyError } from '@oncely/core';
import {
  captureTraceHeaders,
  type TraceOption,
  type NewOutboxEvent,
  type Outbox,
  type OutboxEvent,
  prepareOutboxEvent,
  storageGuard,
  toStorageError,
} from '@oncely/core/adapter';
import type { PostgresDb, PostgresTx } from '../driver/postgres-db.js';
import { type SqlDriverOptions, sqlDriver } from '../driver/sql-driver.js';
import { prepared } from '../sql/prepared.js';
import { sqlState } from '../driver/sql-state.js';
import { qualifiedName, type QuotedIdentifier, quoteIdentifier } from '../identifiers/identifier.js';
import { outboxStatements } from './outbox-statements.js';
import { type ChangedRow, changedOf, postgresSource } from './postgres-source.js';
import { openWakeUp } from './wake-up.js';
import type { TransactionBridge } from '../bridge/transaction-bridge.js';
import { bridgeTxDriver, ownTxDriver, type TxDriver } from '../driver/tx-driver.js';
import { traceApi } from '../trace/otel-api.js';

const storageCall = storageGuard('postgres');

/** The table `migrate()` creates for the outbox unless told otherwise. */
export const DEFAULT_OUTBOX_TABLE = 'oncely_outbox';

/** Options of {@link postgresOutbox}, with oncely's own driver or a bridge. */
interface OutboxTableOptions {
  /** Outbox table (default `oncely_outbox`); its sequences live in `<table>_sequences`, as `migrate()` names them. */
  readonly table?: string;
  /** Schema of both tables (default `public`). */
  readonly schema?: string;
  /**
   * LISTEN/NOTIFY channel that wakes idle relays at commit (default: the table name). `false` turns
   * wake-ups off (PgBouncer in transaction mode cannot LISTEN): relays then poll.
   */
  readonly channel?: string | false;
  /**
   * Where `enqueue` reads the active trace context from, into the event's `traceparent`/`tracestate`
   * headers: `@opentelemetry/api` when it is installed (default), another copy of it, or `false`.
   */
  readonly trace?: TraceOption;
}

/** Options of {@link postgresOutbox} on oncely's own driver. */
export interface PostgresOutboxOptions extends SqlDriverOptions, OutboxTableOptions {
  /** A `pg.Pool`, a connected `pg.Client` or a PGlite instance; the outbox never closes it. */
  readonly db: PostgresDb;
  readonly bridge?: undefined;
}

/**
 * Options of {@link postgresOutbox} through an ORM. `enqueue` takes the ORM's transaction; the
 * NOTIFY still goes out at commit, but this outbox's `source` has no `subscribe` (relays poll): a
 * relay that wants wake-ups takes the source of a `postgresOutbox({ db: pool })` on the same tables.
 */
export interface BridgedOutboxOptions<Db, Tx> extends OutboxTableOptions {
  /** The ORM's database object; the outbox never closes it. */
  readonly db: Db;
  /** How oncely's statements go through the ORM. */
  readonly bridge: TransactionBridge<Db, Tx>;
}

/** A PostgreSQL transactional outbox: the `Outbox` contract of `@oncely/core` over a `PostgresTx` (or an ORM's transaction). */
export interface PostgresOutbox<Tx = PostgresTx> extends Outbox<Tx> {
  /** The quoted `"schema"."table"` holding the events. */
  readonly table: QuotedIdentifier;
  /**
   * Writes an event in your transaction `tx` (the `tx` of `runInTransaction`, or any transaction on
   * the same database), so it commits or rolls back with your business writes. Without an
   * `aggregateSeq`, assigns the aggregate's next one; the sequence row it locks orders concurrent
   * enqueues of one aggregate, so a higher sequence never commits before a lower one. A caller's
   * `aggregateSeq` must be higher than every one enqueued for the aggregate (`outbox_sequence_conflict`
   * otherwise); an `eventId` already in the outbox is refused with `duplicate_event`. A failed
   * enqueue leaves `tx` aborted: roll it back. Pass the transaction, not the pool: on a pool or a
   * client outside a transaction the event would commit on its own.
   */
  enqueue<P>(tx: Tx, event: NewOutboxEvent<P>): Promise<OutboxEvent<P>>;
}

interface EnqueuedRow {
  readonly aggregate_seq: number;
  readonly created_ms: number;
}

/**
 * A transactional outbox on PostgreSQL, in the tables `migrate()` creates (`sql/0002_outbox.sql`,
 * `sql/0005_outbox_aggregates.sql`). `enqueue` runs in the caller's transaction; `source` gives relays
 * (`createRelay` in `@oncely/core`) a claim where several relays can run at once: each leases whole
 * aggregates (`FOR UPDATE SKIP LOCKED`, a lease on the database clock) and takes their next events in
 * sequence order, so the claim costs the same whatever the backlog. Delivery is
 * at-least-once: consumers deduplicate with an inbox (`postgresInbox`).
 */
export function postgresOutbox(options: PostgresOutboxOptions): PostgresOutbox;
export function postgresOutbox<Db, Tx>(options: BridgedOutboxOptions<Db, Tx>): PostgresOutbox<Tx>;
export function postgresOutbox<Db, Tx>(options: PostgresOutboxOptions | BridgedOutboxOptions<Db, Tx>): PostgresOutbox<Tx> {
  const schema = options.schema ?? 'public';
  const tableName = options.table ?? DEFAULT_OUTBOX_TABLE;
  const table = qualifiedName(schema, tableName);
  const tables = {
    outbox: table,
    sequences: qualifiedName(schema, `${tableName}_sequences`),
    aggregates: qualifiedName(schema, `${tableName}_aggregates`),
    claim: qualifiedName(schema, `${tableName}_claim`),
  };
  const channel = options.channel === false ? undefined : (options.channel ?? tableName);
  if (channel !== undefined) quoteIdentifier(channel, 'notification channel');
  const own = options.bridge === undefined ? sqlDriver(options.db as PostgresDb, options as PostgresOutboxOptions) : undefined;
  const driver = (own ? ownTxDriver(own) : bridgeTxDriver(options.db as Db, (options as BridgedOutboxOptions<Db, Tx>).bridge)) as TxDriver<Tx>;
  const sql = prepared(outboxStatements(tables, channel !== undefined));
  const source = postgresSource(driver, sql);
  // LISTEN needs a connection of oncely's own driver; through a bridge, relays poll.
  if (own && channel !== undefined) source.subscribe = () => storageCall('outbox.subscribe', () => openWakeUp(options.db as PostgresDb, own, channel));

  return {
    table,
    source,
    async enqueue<P>(tx: Tx, input: NewOutboxEvent<P>): Promise<OutboxEvent<P>> {
      const event = prepareOutboxEvent(input, captureTraceHeaders(await traceApi(options.trace)));
      if (!driver.isTx(tx)) {
        throw new OncelyError('invalid_state', 'oncely/postgres: enqueue needs the transaction handle (tx) to write in');
      }
      const params = [
        event.eventId,
        event.aggregateType,
        event.aggregateId,
        event.aggregateSeq ?? null,
        event.eventType,
        event.payloadJson,
        event.headers === undefined ? null : JSON.stringify(event.headers),
        ...(channel === undefined ? [] : [channel]),
      ];
      let rows: EnqueuedRow[];
      try {
        ({ rows } = await driver.on(tx).query<EnqueuedRow>(sql.enqueue, params));
      } catch (error) {
        throw enqueueError(error);
      }
      const row = rows[0];
      if (!row) {
        throw new OncelyError(
          'outbox_sequence_conflict',
          `oncely/postgres: aggregateSeq ${event.aggregateSeq} is not higher than the last sequence of ${event.aggregateType}/${event.aggregateId}`,
        );
      }
      return {
        eventId: event.eventId,
        aggregateType: event.aggregateType,
        aggregateId: event.aggregateId,
        aggregateSeq: Number(row.aggregate_seq),
        eventType: event.eventType,
        payload: JSON.parse(event.payloadJson) as P,
        createdAt: new Date(Number(row.created_ms)),
        ...(event.headers === undefined ? {} : { headers: event.headers }),
      };
    },
    async requeue(eventIds) {
      const { rows } = await storageCall('outbox.requeue', () => driver.query<ChangedRow>(sql.requeue, [eventIds]));
      return changedOf(rows);
    },
  };
}

/** Names the two refusals a caller can fix; everything else is a storage failure. */
function enqueueError(error: unknown): OncelyError {
  const state = sqlState(error);
  if (state === '23505' && /_pkey/.test(String((error as { constraint?: unknown }).constraint ?? (error as Error).message))) {
    return new OncelyError('duplicate_event', 'oncely/postgres: an event with this eventId is already in the outbox', { cause: error });
  }
  if (state === '22P05') {
    return new OncelyError('invalid_event', 'oncely/postgres: jsonb cannot store the character U+0000; remove it from the payload', {
      cause: error,
    });
  }
  return toStorageError('postgres', 'outbox.enqueue', error);
}
