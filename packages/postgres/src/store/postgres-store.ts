import { type IdempotencyRecord, OncelyError, type Scope, type TransactionalStore } from '@oncely/core';
import {
  type ClaimInput,
  type ClaimResult,
  type FenceResult,
  type FlowStore,
  integerOption,
  storageGuard,
  type TransactionClaim,
  type TransactionDecision,
  toStorageError,
} from '@oncely/core/adapter';
import { isHeldRouteDeclined, type TransactionBridge } from '../bridge/transaction-bridge.js';
import { bridgeTxDriver, joinedTx, ownTxDriver, type PostgresJoinable, type TxDriver } from '../driver/tx-driver.js';
import { joinedTransaction, lostRecord, type TransactionSteps } from './joined-transaction.js';
import type { PostgresDb, PostgresTx, TxOf } from '../driver/postgres-db.js';
import { isPostgresJsSql } from '../driver/postgresjs-driver.js';
import { endedConnection, type SqlDriverOptions, sqlDriver } from '../driver/sql-driver.js';
import { setIsolation } from '../sql/isolation.js';
import { prepared } from '../sql/prepared.js';
import { isConnectionLost, isLockTimeout, isRetryableConflict } from '../driver/sql-state.js';
import { qualifiedName } from '../identifiers/identifier.js';
import { postgresFlows } from './postgres-flows.js';
import { type ClaimRow, claimAnswer, type RecordRow, responseParams, scopeParams, toRecord } from './record.js';
import { storeStatements } from '../sql/statements.js';
import { pipelinedTransaction } from './pipelined-transaction.js';
import { replayOdds } from './replay-odds.js';
import { completedRow, type ScriptedStore, scriptedTransaction, type TransactionPhase } from './scripted-transaction.js';

/** The table `migrate()` creates unless told otherwise. */
export const DEFAULT_TABLE = 'oncely_idempotency';

/** Options of {@link postgresStore}, shared by oncely's own driver and a bridge. */
interface StoreTableOptions {
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
  /**
   * Transactional mode on `pg` and postgres.js (READ COMMITTED): claim the key with a transaction-level
   * advisory lock instead of a claim row, and write the record once, completed, with COMMIT: one write
   * per first request instead of two. Default false. See the README for what changes with it.
   */
  readonly lockClaim?: boolean;
}

/** Options of {@link postgresStore} on oncely's own driver. */
export interface PostgresStoreOptions<Db extends PostgresDb = PostgresDb> extends SqlDriverOptions, StoreTableOptions {
  /** A `pg.Pool`, a connected `pg.Client`, a postgres.js `sql` or a PGlite instance; the store never closes it. */
  readonly db: Db;
  readonly bridge?: undefined;
}

/** Options of {@link postgresStore} through an ORM: its database object and the bridge that runs oncely's statements on it. */
export interface BridgedStoreOptions<Db, Tx> extends StoreTableOptions, SqlDriverOptions {
  /** The ORM's database object (Drizzle's `db`, a `Kysely`, a `Knex`); the store never closes it. */
  readonly db: Db;
  /** How oncely's statements and transactions go through the ORM (`drizzleBridge`, `kyselyBridge`, `knexBridge`, …). */
  readonly bridge: TransactionBridge<Db, Tx>;
}

/**
 * A PostgreSQL idempotency store: lease mode (`run`), transactional mode (`runInTransaction`, also
 * joining a transaction the caller opened with `{ tx }`) and flows (`flow`). `Tx` is what handlers
 * get as `context.tx`: a {@link PostgresTx} on `pg` and PGlite, postgres.js's own `sql` on a
 * postgres.js database, the ORM's transaction through a bridge; `Join` is what `{ tx }` accepts.
 */
export interface PostgresStore<Tx = PostgresTx, Join = PostgresJoinable>
  extends TransactionalStore<Tx, Join>,
    Omit<FlowStore<Tx>, 'capabilities'> {
  readonly capabilities: TransactionalStore<Tx>['capabilities'] & { readonly flows: true };
  /** The quoted `"schema"."table"` the store reads and writes. */
  readonly table: string;
  join<T>(tx: Join, input: ClaimInput, work: (claim: TransactionClaim, tx: Tx) => Promise<TransactionDecision<T>>): Promise<T>;
}

const NAME = 'postgres';
/** A claim repeats only when another commit lands on the same key between snapshot and write. */
const CLAIM_ATTEMPTS = 10;

/** A claim that met a completed record: the call replays (or answers mismatch) without running the handler. */
const isReplay = (claim: ClaimResult | TransactionClaim) => claim.kind === 'existing' && claim.record.state !== 'in_progress';

const lockTimeoutSetting = (ms: number | undefined): string | null =>
  ms === undefined ? null : String(integerOption('oncely/postgres: lockTimeoutMs', ms));

/**
 * Creates the PostgreSQL store. Run {@link migrate} (or the shipped SQL) first. Every method is one
 * statement; failures become `StorageError`s, and nothing runs without a claim. With a `bridge`,
 * every statement goes through the ORM and handlers get the ORM's own transaction as `context.tx`.
 */
export function postgresStore<Db extends PostgresDb>(options: PostgresStoreOptions<Db>): PostgresStore<TxOf<Db>>;
export function postgresStore<Db, Tx>(options: BridgedStoreOptions<Db, Tx>): PostgresStore<Tx, Tx>;
export function postgresStore<Db, Tx>(options: PostgresStoreOptions | BridgedStoreOptions<Db, Tx>): PostgresStore<Tx, unknown> {
  const own = options.bridge === undefined ? sqlDriver((options as PostgresStoreOptions).db, options as PostgresStoreOptions) : undefined;
  const driver = (own ? ownTxDriver(own) : bridgeTxDriver(options.db as Db, (options as BridgedStoreOptions<Db, Tx>).bridge)) as TxDriver<Tx>;
  // An ORM on a pg.Pool whose bridge can build its transaction over a connection: oncely's own BEGIN and COMMIT.
  const onPg = options.bridge?.pg;
  const pgPool = onPg?.pool(options.db as Db);
  // An ORM on postgres.js whose bridge can build its transaction over a reserved connection: oncely's pipelined route.
  const onPostgresJs = pgPool ? undefined : options.bridge?.postgresJs;
  const postgresJsSql = onPostgresJs?.sql(options.db as Db);
  const heldBy = onPg && pgPool ? onPg : onPostgresJs && postgresJsSql ? onPostgresJs : undefined;
  const scriptedPg = heldBy ? { bridge: heldBy, driver: sqlDriver((pgPool ?? postgresJsSql)!, options), declined: false } : undefined;
  // oncely's own drivers, and a bridge over an in-process database (Drizzle on PGlite), may read a completed record first.
  const readFirst = own !== undefined || options.bridge?.readsFirst?.(options.db as Db) === true;
  const table = qualifiedName(options.schema ?? 'public', options.table ?? DEFAULT_TABLE);
  const lockTimeout = lockTimeoutSetting(options.lockTimeoutMs);
  const sql = prepared(storeStatements(table));
  const prepare = (options as PostgresStoreOptions).preparedStatements ?? true;
  const scripted: ScriptedStore = { sql, prepare, lockTimeout, attempts: CLAIM_ATTEMPTS, lockClaim: options.lockClaim === true };
  // The ORM's isolation level opens oncely's transaction as the ORM would have opened its own.
  const scriptedOrm: ScriptedStore = { ...scripted, isolation: onPg && pgPool ? setIsolation(onPg.isolationLevel?.(options.db as Db)) : null };

  const storage = storageGuard(NAME);
  // Per mode: while replays dominate, a completed record is read with one pooled statement, before any claim.
  const leaseReplays = replayOdds();
  const transactionReplays = replayOdds();

  /** The key's record when it is completed and live (what a claim would answer `existing` with, unchanged until it expires). */
  function completedRecord(scope: Scope): Promise<IdempotencyRecord | undefined> {
    // `then`, not an async function: the replay's read is on its hot path, and each hop is a microtask.
    return driver.query<RecordRow>(sql.get, scopeParams(scope)).then(({ rows: [row] }) => (completedRow(row) ? toRecord(scope, row) : undefined));
  }

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

  /** The claim and the save inside a transaction, for every path but pg's scripted one. */
  const steps: TransactionSteps = {
    async claim(on, input) {
      try {
        return await claimOn(on, input, lockTimeout);
      } catch (error) {
        if (!isLockTimeout(error)) throw error;
        // The transaction is aborted; the work answers in_progress and it rolls back.
        return { kind: 'busy' };
      }
    },
    async save(on, input, decision) {
      const saved = await on.query(sql.save, [
        ...scopeParams(input.scope),
        input.token,
        decision.state,
        ...responseParams(decision.response),
        decision.retentionMs,
      ]);
      if (saved.rows.length !== 1) throw lostRecord();
    },
  };

  /**
   * PGlite's claim: a fresh or lapsed key is won by one upsert, half the claim's work; a key it does
   * not take (live, or someone else's) goes through the full claim, which reads what is there.
   */
  async function claimByUpsert(on: PostgresTx, input: ClaimInput): Promise<TransactionClaim> {
    const params = [...scopeParams(input.scope), input.fingerprint, input.token, input.leaseMs, input.retentionMs];
    const [won] = (await on.query<{ fence: number }>(sql.claimFresh, params)).rows;
    return won ? { kind: 'claimed', fence: won.fence, takeover: won.fence > 1 } : steps.claim(on, input);
  }

  async function fenced(operation: 'complete' | 'release' | 'extend', text: string, params: unknown[]): Promise<FenceResult> {
    return storage(operation, async () => ((await driver.query(text, params)).rows.length === 1 ? 'ok' : 'fence_lost'));
  }

  /** Maps what a transaction threw by where it stood: the handler's own errors pass, the store's become StorageErrors. */
  const failure = (phase: TransactionPhase, error: unknown) => {
    // The handler's own error passes through unchanged; the rollback already undid the claim.
    // A lost connection is the store's failure, wherever it surfaced: nothing committed.
    if (phase === 'work' && !isConnectionLost(error)) return error;
    return toStorageError(NAME, phase === 'work' ? 'transaction' : phase, error);
  };

  return {
    name: NAME,
    table,
    capabilities: { transactions: true, nativeTtl: false, flows: true },
    ...postgresFlows(driver, options.schema ?? 'public', options.table ?? DEFAULT_TABLE, storage),

    claim: (input) =>
      storage('claim', async () => {
        if (leaseReplays.likely) {
          const record = await completedRecord(input.scope);
          if (record) {
            leaseReplays.record(true);
            return { kind: 'existing', record };
          }
        }
        for (let attempt = 1; ; attempt++) {
          try {
            const answer = await claimOn(driver, input, null);
            leaseReplays.record(isReplay(answer));
            return answer;
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

    async transaction(input, handle) {
      const work: typeof handle = (claim, tx) => {
        transactionReplays.record(isReplay(claim));
        return handle(claim, tx);
      };
      for (let attempt = 1; ; attempt++) {
        // Assigned inside the callbacks, so typed wide: control flow cannot follow it there.
        let phase = 'begin' as TransactionPhase;
        const at = (now: TransactionPhase) => {
          phase = now;
        };
        try {
          if (readFirst && transactionReplays.likely) {
            phase = 'claim';
            const record = await completedRecord(input.scope);
            if (record) {
              phase = 'work';
              // No connection is held and no transaction is open: the engine hands a tx to handlers of won claims only.
              return (await work({ kind: 'existing', record }, endedConnection() as unknown as Tx)).value;
            }
          }
          const run = work as unknown as (claim: TransactionClaim, tx: PostgresTx) => Promise<TransactionDecision<unknown>>;
          const scriptedValue = (value: unknown) => value as Awaited<ReturnType<typeof work>>['value'];
          if (own?.session) return scriptedValue(await own.session((held) => scriptedTransaction(held, scripted, input, run, at)));
          if (own?.reserve) return scriptedValue(await own.reserve((held) => pipelinedTransaction(held, scripted, input, run, at)));
          if (scriptedPg && !scriptedPg.declined) {
            const { bridge, driver: held } = scriptedPg;
            /** The handler gets the ORM's transaction over the connection the claim and BEGIN went out on. */
            const onHeld = async (claim: TransactionClaim, connection: unknown) => {
              const tx = await (bridge.transactionOn as (db: Db, on: unknown) => Promise<Tx>)(options.db as Db, connection);
              let decision: Awaited<ReturnType<typeof work>>;
              try {
                decision = await work(claim, tx);
              } catch (error) {
                await bridge.ended?.(tx, false);
                throw error;
              }
              const committing = claim.kind === 'claimed' && decision.action === 'commit';
              // What the ORM writes on ending is what it writes at its own commit (a unit of work's flush): failing, nothing commits.
              if (committing) at('commit');
              // The connection goes back to the pool after COMMIT: the ORM's object must not outlive the handler on it.
              await bridge.ended?.(tx, committing);
              return decision;
            };
            try {
              if (held.session) return await held.session((session) => scriptedTransaction(session, scriptedOrm, input, (claim) => onHeld(claim, session.client), at));
              if (held.reserve) return await held.reserve((session) => pipelinedTransaction(session, scripted, input, (claim) => onHeld(claim, session.tx), at));
            } catch (error) {
              // The connection in hand showed the ORM is not on the driver this route needs: nothing was sent.
              if (!isHeldRouteDeclined(error)) throw error;
              scriptedPg.declined = true;
            }
          }
          phase = 'claim';
          // Prepared before the transaction opens, so the claim and the save inside it run planned.
          const upsert = own?.kind === 'pglite' && lockTimeout === null;
          await own?.prepare?.([lockTimeout === null ? sql.claim : sql.claimBounded, sql.save, ...(upsert ? [sql.claimFresh] : [])]);
          return await driver.transaction(async (tx) => {
            phase = 'claim';
            const on = driver.on(tx);
            const claim = upsert ? await claimByUpsert(on, input) : await steps.claim(on, input);
            phase = 'work';
            const decision = await work(claim, tx);
            if (decision.action === 'rollback' || claim.kind !== 'claimed') {
              return { action: 'rollback', value: decision.value };
            }
            phase = 'save';
            await steps.save(on, input, decision);
            phase = 'commit';
            return { action: 'commit', value: decision.value };
          });
        } catch (error) {
          // Before the handler ran, a serialization conflict just means: start over on a fresh snapshot.
          if (phase === 'claim' && isRetryableConflict(error) && attempt < CLAIM_ATTEMPTS) continue;
          throw failure(phase, error);
        }
      }
    },

    async join(joined, input, work) {
      let phase = 'begin' as TransactionPhase;
      const on = own ? joinedTx(joined as PostgresJoinable) : undefined;
      // On postgres.js the handler writes through the caller's own sql (tagged templates), elsewhere through oncely's view of it.
      const tx = (own ? (isPostgresJsSql(joined) ? joined : on) : joined) as Tx;
      if (!own && !driver.isTx(tx)) {
        throw new OncelyError('invalid_option', 'oncely/postgres: the transaction to join must be the ORM transaction object');
      }
      try {
        return await joinedTransaction(steps, on ?? driver.on(tx), tx, input, work, (now) => {
          phase = now;
        });
      } catch (error) {
        // Inside the caller's snapshot a serialization conflict cannot be retried here: the caller retries its transaction.
        throw failure(phase, error);
      }
    },

    // The store opened nothing: the pool or PGlite instance belongs to the caller.
    close: async () => undefined,
  };
}
