import type { JournalOperation } from '@oncely/core';
import {
  assertValidOperationId,
  type JournalEntry,
  type JournalRow,
  type JournalState,
  type OperationJournal,
  operationNotBegun,
  resolveBegin,
  resolveListUnresolved,
  resolveOutcome,
  resolvePurgeSettled,
  storageGuard,
  toJournalEntry,
} from '@oncely/core/adapter';
import type { PostgresDb } from '../driver/postgres-db.js';
import { type SqlDriver, type SqlDriverOptions, sqlDriver } from '../driver/sql-driver.js';
import { prepared } from '../sql/prepared.js';
import { qualifiedName, type QuotedIdentifier } from '../identifiers/identifier.js';
import { journalStatements } from './journal-statements.js';

/** The table `migrate()` creates for the journal unless told otherwise. */
export const DEFAULT_JOURNAL_TABLE = 'oncely_journal';

/** Options of {@link postgresJournal}. */
export interface PostgresJournalOptions extends SqlDriverOptions {
  /** A `pg.Pool`, a connected `pg.Client` or a PGlite instance; the journal never closes it. */
  readonly db: PostgresDb;
  /** Journal table (default `oncely_journal`); letters, digits and `_`. */
  readonly table?: string;
  /** Schema of that table (default `public`). */
  readonly schema?: string;
}

/** The PostgreSQL journal. */
export interface PostgresJournal extends OperationJournal {
  /** The quoted `"schema"."table"` it reads and writes. */
  readonly table: QuotedIdentifier;
}

interface EntryRow {
  readonly operation_id: string;
  readonly idempotency_key: string;
  readonly state: JournalState;
  readonly attempts: number;
  readonly request_json: string | null;
  readonly outcome_json: string | null;
  readonly last_error: string | null;
  readonly created_ms: number;
  readonly updated_ms: number;
  readonly changed?: boolean;
}

/** A read that lost a race with a concurrent change runs again; a fresh snapshot sees the change. */
const STATEMENT_ATTEMPTS = 10;

const toEntry = (row: EntryRow): JournalEntry =>
  toJournalEntry({
    operationId: row.operation_id,
    key: row.idempotency_key,
    state: row.state,
    attempts: Number(row.attempts),
    requestJson: row.request_json ?? undefined,
    dataJson: row.outcome_json ?? undefined,
    lastError: row.last_error ?? undefined,
    createdAt: Number(row.created_ms),
    updatedAt: Number(row.updated_ms),
  } satisfies JournalRow);

/**
 * An {@link OperationJournal} on PostgreSQL: one row per operation in the table `migrate()` creates
 * (`sql/0004_journal.sql`). Every call is one statement judged by the database clock; concurrent
 * begins agree through the primary key. Failures become `StorageError`s.
 */
export function postgresJournal(options: PostgresJournalOptions): PostgresJournal {
  const driver: SqlDriver = sqlDriver(options.db, options);
  const table = qualifiedName(options.schema ?? 'public', options.table ?? DEFAULT_JOURNAL_TABLE);
  const sql = prepared(journalStatements(table));

  // Every reply is read inside the guard: a row this code cannot read is a corrupt_record StorageError.
  const storageCall = storageGuard('postgres');

  /** Runs a change-or-read statement until its answer is consistent. */
  const consistentRow = async (operation: JournalOperation, text: string, params: readonly unknown[]) => {
    for (let attempt = 1; ; attempt++) {
      const { rows } = await driver.query<EntryRow>(text, params);
      const row = rows[0];
      // Nothing read, or an open entry left unchanged: the snapshot predates a concurrent commit.
      const stale = operation === 'journal.begin' ? !row : row !== undefined && !row.changed && (row.state === 'pending' || row.state === 'unknown');
      if (!stale || attempt >= STATEMENT_ATTEMPTS) return row;
    }
  };

  const changed = (operation: JournalOperation, text: string, operationId: string, params: readonly unknown[]) =>
    storageCall(operation, async () => {
      const row = await consistentRow(operation, text, [operationId, ...params]);
      if (!row) throw operationNotBegun('postgres', operationId);
      return toEntry(row);
    });

  return {
    name: 'postgres',
    table,
    async begin(operationId, beginOptions) {
      const { key, requestJson } = resolveBegin(operationId, beginOptions);
      return storageCall('journal.begin', async () => {
        const row = await consistentRow('journal.begin', sql.begin, [operationId, key, requestJson ?? null]);
        if (!row) throw new Error('the entry was neither inserted nor found');
        return { kind: row.changed ? ('started' as const) : ('resumed' as const), entry: toEntry(row) };
      });
    },
    async get(operationId) {
      assertValidOperationId(operationId);
      return storageCall('journal.get', async () => {
        const { rows } = await driver.query<EntryRow>(sql.get, [operationId]);
        return rows[0] && toEntry(rows[0]);
      });
    },
    async recordAttempt(operationId) {
      assertValidOperationId(operationId);
      return changed('journal.recordAttempt', sql.attempt, operationId, []);
    },
    async complete(operationId, outcome) {
      assertValidOperationId(operationId);
      const { state, dataJson } = resolveOutcome(outcome);
      return changed('journal.complete', sql.complete, operationId, [state, dataJson ?? null]);
    },
    async markUnknown(operationId, lastError) {
      assertValidOperationId(operationId);
      return changed('journal.markUnknown', sql.unknown, operationId, [lastError === undefined ? null : String(lastError)]);
    },
    async listUnresolved(listOptions) {
      const { staleAfterMs, limit } = resolveListUnresolved(listOptions);
      return storageCall('journal.listUnresolved', async () => (await driver.query<EntryRow>(sql.unresolved, [staleAfterMs, limit])).rows.map(toEntry));
    },
    async purgeSettled(purgeOptions) {
      const { olderThanMs, limit } = resolvePurgeSettled(purgeOptions);
      const { rows } = await storageCall('journal.purgeSettled', () => driver.query<{ count: number }>(sql.purge, [olderThanMs, limit]));
      return Number(rows[0]?.count ?? 0);
    },
    async close() {},
  };
}
