import type { IdempotencyRecord, IdempotencyStore, Scope } from '@oncely/core';
import {
  type ClaimInput,
  type ClaimResult,
  type FenceResult,
  integerOption,
  invalidOption,
  storageGuard,
  toStorageError,
} from '@oncely/core/adapter';
import Database from 'better-sqlite3';
import { type RecordRow, toRecord } from './record.js';
import { createTable } from './schema.js';
import { storeStatements } from './statements.js';

// #region options
/** Options of {@link sqliteStore}. */
export interface SqliteStoreOptions {
  /** The database file. The store opens a connection of its own to it and closes it in `close()`. */
  readonly filename: string;
  /** Table of records (default `oncely_idempotency`): a letter or `_`, then letters, digits and `_`. */
  readonly table?: string;
  /** How long a call waits for another connection's write lock before it fails, in ms (default 5000). */
  readonly busyTimeoutMs?: number;
}

/** An idempotency store on SQLite, in lease mode. */
export interface SqliteStore extends IdempotencyStore {
  /** The table the store reads and writes. */
  readonly table: string;
}

const NAME = 'sqlite';
const OWNER = 'oncely/sqlite';
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Checks every option before anything is opened: a bad one is `invalid_option`, and nothing is left behind. */
function checkOptions(options: SqliteStoreOptions) {
  if (typeof options.filename !== 'string' || options.filename === '') {
    throw invalidOption(OWNER, 'filename must name a database file');
  }
  const table = options.table ?? 'oncely_idempotency';
  if (typeof table !== 'string' || !TABLE_NAME.test(table)) {
    throw invalidOption(OWNER, `table must be a letter or _, then letters, digits and _ (at most 63), got ${JSON.stringify(table)}`);
  }
  const busyTimeoutMs = integerOption(`${OWNER}: busyTimeoutMs`, options.busyTimeoutMs ?? 5_000, 0);
  return { filename: options.filename, table, busyTimeoutMs };
}
// #endregion options

// #region open
/** Opens the store's connection and creates its table; a failure here is a `StorageError` too. */
function open(filename: string, table: string, busyTimeoutMs: number): Database.Database {
  let db: Database.Database | undefined;
  try {
    db = new Database(filename, { timeout: busyTimeoutMs });
    // Readers never wait for the writer, and other connections (other processes too) see each commit.
    db.pragma('journal_mode = WAL');
    db.exec(createTable(table));
    return db;
  } catch (error) {
    db?.close();
    throw toStorageError(NAME, 'migrate', error);
  }
}
// #endregion open

// #region factory
/** The four scope parameters every statement names the record by. */
const scopeParams = ({ tenant, principal, operation, key }: Scope) => ({ tenant, principal, operation, key });

/**
 * Creates the SQLite store: every call is one statement, or one `BEGIN IMMEDIATE` transaction for
 * the claim, judged by SQLite's clock; every failure leaves as a `StorageError`.
 */
export function sqliteStore(options: SqliteStoreOptions): SqliteStore {
  const { filename, table, busyTimeoutMs } = checkOptions(options);
  const db = open(filename, table, busyTimeoutMs);
  const statements = storeStatements(table);
  const sql = {
    claim: db.prepare<[object], { fence: number }>(statements.claim),
    read: db.prepare<[object], RecordRow>(statements.read),
    complete: db.prepare<[object]>(statements.complete),
    release: db.prepare<[object]>(statements.release),
    extend: db.prepare<[object]>(statements.extend),
    get: db.prepare<[object], RecordRow>(statements.get),
    purge: db.prepare<[object]>(statements.purge),
  };
  const storage = storageGuard(NAME);
  // #endregion factory

  // #region claim
  // Claim-or-read in one transaction that takes the write lock first: no other connection writes
  // between the claim and the read of the record it found.
  const claimOrRead = db.transaction((input: ClaimInput): ClaimResult => {
    const { fingerprint, token, leaseMs, retentionMs } = input;
    const claimed = sql.claim.get({ ...scopeParams(input.scope), fingerprint, token, leaseMs, retentionMs });
    if (claimed) return { kind: 'claimed', fence: claimed.fence, takeover: claimed.fence > 1 };
    const row = sql.read.get(scopeParams(input.scope));
    if (!row) throw new Error('the record the claim found is gone');
    return { kind: 'existing', record: toRecord(input.scope, row) };
  });
  // #endregion claim

  // #region methods
  /** A compare-and-set on the lease token: it changed one row, or the token does not hold the lease. */
  const fenced = (changes: number): FenceResult => (changes === 1 ? 'ok' : 'fence_lost');

  return {
    name: NAME,
    table,
    capabilities: { transactions: false, nativeTtl: false },

    claim: (input) => storage('claim', () => claimOrRead.immediate(input)),

    complete: ({ scope, token, state, response, retentionMs }) =>
      storage('complete', () =>
        fenced(sql.complete.run({ ...scopeParams(scope), token, state, response: JSON.stringify(response), retentionMs }).changes),
      ),

    release: ({ scope, token }) => storage('release', () => fenced(sql.release.run({ ...scopeParams(scope), token }).changes)),

    extend: ({ scope, token, leaseMs }) =>
      storage('extend', () => fenced(sql.extend.run({ ...scopeParams(scope), token, leaseMs }).changes)),

    get: (scope): Promise<IdempotencyRecord | undefined> =>
      storage('get', () => {
        const row = sql.get.get(scopeParams(scope));
        return row && toRecord(scope, row);
      }),

    purgeExpired: (limit) =>
      storage('purgeExpired', () => sql.purge.run({ limit: integerOption(`${OWNER}: purgeExpired limit`, limit) }).changes),

    close: async () => {
      db.close();
    },
  };
}
// #endregion methods
