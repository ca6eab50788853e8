import { type IdempotencyRecord, OncelyError, type Scope, type TransactionalStore } from '@oncely/core';
import {
  type ClaimInput,
  type ClaimResult,
  type FenceResult,
  type FlowStore,
  integerOption,
  storageGuard,
  type TransactionClaim,
  toStorageError,
} from '@oncely/core/adapter';
import type { PostgresDb, PostgresTx, TxOf } from '../driver/postgres-db.js';
import { endedConnection, type SqlDriverOptions, sqlDriver } from '../driver/sql-driver.js';
import { prepared } from '../sql/prepared.js';
import { isConnectionLost, isLockTimeout, isRetryableConflict } from '../driver/sql-state.js';
import { qualifiedName } from '../identifiers/identifier.js';
import { postgresFlows } from './postgres-flows.js';
import { type ClaimRow, claimAnswer, type RecordRow, responseParams, scopeParams, toRecord } from './record.js';
import { storeStatements } from '../sql/statements.js';
import { pipelinedTransaction } from './pipelined-transaction.js';
import { type ScriptedStore, scriptedTransaction, type TransactionPhase } from './scripted-transaction.js';

/** The table `migrate()` creates unless told otherwise. */
export const DEFAULT_TABLE = 'oncely_idempotency';

/** Options of {@link postgresStore}. */
export interface PostgresStoreOptions<Db extends PostgresDb = PostgresDb> extends SqlDriverOptions {
  /** A `pg.Pool`, a connected `pg.Client`, a postgres.js `sql` or a PGlite instance; the store never closes it. */
  readonly db: Db;
  /** Table of idempotency records (default `oncely_idempotency`); letters, digits and `_`. */
  readonly table?: string;
  /** Schema of that table (default `public`); letters, digits and `_`. */
  readonly schema?: string;
  /**
   * Transactional mode: how long a concurrent duplicate waits for the first transaction holding the
   * key before it answers `in_progress` (PostgreSQL `lock_timeout`, claim statement only). Default:
   * it waits until that transaction ends, then replays or executes.
   */
  readonly lockTimeoutMs?: number;
}

/**
 * A PostgreSQL idempotency store: lease mode (`run`), transactional mode (`runInTransaction`) and
 * flows (`flow`). `Tx` is the handler's `tx`: postgres.js's own `sql` on a postgres.js database.
 */
export interface PostgresStore<Tx extends PostgresTx = PostgresTx> extends TransactionalStore<Tx>, Omit<FlowStore<Tx>, 'capabilities'> {
  readonly capabilities: TransactionalStore<Tx>['capabilities'] & { readonly flows: true };
  /** The quoted `"schema"."table"` the store reads and writes. */
  readonly table: string;
}

const NAME = 'postgres';
/** A claim repeats only when another commit lands on the same key between snapshot and write. */
const CLAIM_ATTEMPTS = 10;

const lockTimeoutSetting = (ms: number | undefined): string | null =>
  ms === undefined ? null : String(integerOption('oncely/postgres: lockTimeoutMs', ms));

/**
 * Creates the PostgreSQL store. Run {@link migrate} (or the shipped SQL) first. Every method is one
 * statement; failures become `StorageError`s, and nothing runs without a claim.
 */
export function postgresStore<Db extends PostgresDb>(options: PostgresStoreOptions<Db>): PostgresStore<TxOf<Db>> {
  const driver = sqlDriver(options.db, options);
  const table = qualifiedName(options.schema ?? 'public', options.table ?? DEFAULT_TABLE);
  const lockTimeout = lockTimeoutSetting(options.lockTimeoutMs);
  const sql = prepared(storeStatements(table));
  const scripted: ScriptedStore = { sql, prepare: options.preparedStatements ?? true, lockTimeout, attempts: CLAIM_ATTEMPTS };

  const storage = storageGuard(NAME);

  /** Claim-or-read; runs again only when the statement saw a concurrent commit it could not act on. */
  async function claimOn(session: PostgresTx, input: ClaimInput, timeout: string | null): Promise<ClaimResult> {
    const params = [...scopeParams(input.scope), input.fingerprint, input.token, input.leaseMs, input.retentionMs];
    const [text, values] = timeout === null ? [sql.claim, params] : [sql.claimBounded, [...params, timeout]];
    for (let attempt = 1; attempt <= CLAIM_ATTEMPTS; attempt++) {
      const answer = claimAnswer(input.scope, (await session.query<ClaimRow>(text, values)).rows[0]);
      if (answer) return answer;
    }
    throw new Error(`the claim did not settle in ${CLAIM_ATTEMPTS} attempts while the key kept changing`);
  }

  async function fenced(operation: 'complete' | 'release' | 'extend', text: string, params: unknown[]): Promise<FenceResult> {
    return storage(operation, async () => ((await driver.query(text, params)).rows.length === 1 ? 'ok' : 'fence_lost'));
  }

  const store: PostgresStore = {
    name: NAME,
    table,
    capabilities: { transactions: true, nativeTtl: false, flows: true },
    ...postgresFlows(driver, options.schema ?? 'public', options.table ?? DEFAULT_TABLE, storage),

    claim: (input) =>
      storage('claim', async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await claimOn(driver, input, null);
          } catch (error) {
            // Under REPEATABLE READ or SERIALIZABLE a concurrent commit is an error, not an empty result.
            if (!isRetryableConflict(error) || attempt >= CLAIM_ATTEMPTS) throw error;
          }
        }
      }),

    complete: (input) =>
      fenced('complete', sql.complete, [
        ...scopeParams(input.scope),
        input.token,
        input.state,
        ...responseParams(input.response),
        input.retentionMs,
      ]),

    release: (input) => fenced('release', sql.release, [...scopeParams(input.scope), input.token]),

    extend: (input) => fenced('extend', sql.extend, [...scopeParams(input.scope), input.token, input.leaseMs]),

    get: (scope: Scope): Promise<IdempotencyRecord | undefined> =>
      storage('get', async () => {
        const [row] = (await driver.query<RecordRow>(sql.get, scopeParams(scope))).rows;
        return row && toRecord(scope, row);
      }),

    purgeExpired: (limit) => storage('purgeExpired', async () => (await driver.query(sql.purge, [limit])).rowCount),

    async transaction(input, work) {
      for (let attempt = 1; ; attempt++) {
        // Assigned inside the callbacks, so typed wide: control flow cannot follow it there.
        let phase = 'begin' as TransactionPhase;
        const at = (now: TransactionPhase) => {
          phase = now;
        };
        try {
          const { session, reserve } = driver;
          if (session) return await session((held) => scriptedTransaction(held, scripted, input, work, at));
          if (reserve) return await reserve((held) => pipelinedTransaction(held, scripted, input, work, at));
          phase = 'claim';
          // PGlite, a replay in one call: a completed live record answers exactly as the claim would, so no transaction opens.
          const [found] = (await driver.query<RecordRow>(sql.get, scopeParams(input.scope))).rows;
          if (found !== undefined && found.state !== 'in_progress') {
            phase = 'work';
            return (await work({ kind: 'existing', record: toRecord(input.scope, found) }, endedConnection())).value;
          }
          // Prepared before the transaction opens, so the claim and the save inside it run planned.
          await driver.prepare?.([lockTimeout === null ? sql.claim : sql.claimBounded, sql.save]);
          return await driver.transaction(async (tx) => {
            phase = 'claim';
            let claim: TransactionClaim;
            try {
              claim = await claimOn(tx, input, lockTimeout);
            } catch (error) {
              if (!isLockTimeout(error)) throw error;
              // The transaction is aborted; the work answers in_progress and it rolls back.
              claim = { kind: 'busy' };
            }
            phase = 'work';
            const decision = await work(claim, tx);
            if (decision.action === 'rollback' || claim.kind !== 'claimed') {
              return { action: 'rollback', value: decision.value };
            }
            phase = 'save';
            const saved = await tx.query(sql.save, [
              ...scopeParams(input.scope),
              input.token,
              decision.state,
              ...responseParams(decision.response),
              decision.retentionMs,
            ]);
            if (saved.rows.length !== 1) {
              throw new OncelyError('lease_lost', 'oncely/postgres: the claimed record changed inside the transaction; nothing was committed');
            }
            phase = 'commit';
            return { action: 'commit', value: decision.value };
          });
        } catch (error) {
          // The handler's own error passes through unchanged; the rollback already undid the claim.
          // A lost connection is the store's failure, wherever it surfaced: nothing committed.
          if (phase === 'work' && !isConnectionLost(error)) throw error;
          // Before the handler ran, a serialization conflict just means: start over on a fresh snapshot.
          if (phase === 'claim' && isRetryableConflict(error) && attempt < CLAIM_ATTEMPTS) continue;
          throw toStorageError(NAME, phase === 'work' ? 'transaction' : phase, error);
        }
      }
    },

    // The store opened nothing: the pool or PGlite instance belongs to the caller.
    close: async () => undefined,
  };
  // On postgres.js the tx handed to work is postgres.js's own sql (driver/postgresjs-driver.ts), as TxOf says.
  return store as unknown as PostgresStore<TxOf<Db>>;
}
