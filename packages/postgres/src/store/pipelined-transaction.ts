import { OncelyError } from '@oncely/core';
import type { ClaimInput, TransactionClaim, TransactionDecision } from '@oncely/core/adapter';
import type { PostgresJsResultLike, PostgresTx } from '../driver/postgres-db.js';
import { resetPrepared } from '../driver/prepared-on.js';
import type { MessageOutcome, PostgresJsSession } from '../driver/sql-connection.js';
import { isConnectionLost, isLockTimeout, isNotPrepared, isPreparedMismatch, isRetryableConflict } from '../driver/sql-state.js';
import { invocation, PREPARED_HERE, preparations } from '../sql/invocation.js';
import type { LiteralValue } from '../sql/literal.js';
import { type ClaimRow, claimAnswer, type RecordRow, toRecord } from './record.js';
import {
  claimableBy,
  claimRowSteps,
  isClaimNotWon,
  isLostRecord,
  isNotReadCommitted,
  oneWriteFor,
  oneWriteSteps,
  saveAndCommitText,
  type ScriptedStore,
  type TransactionPhase,
  wonAt,
} from './scripted-transaction.js';

/** ROLLBACK that never throws; a connection that cannot roll back is not released to anyone else. */
async function rollback(session: PostgresJsSession): Promise<void> {
  const { error } = await session.script('ROLLBACK');
  if (error !== undefined) session.watch.lost ??= error;
}

/** Re-reads what this connection has prepared: what was tracked turned out wrong (42P05, 26000). */
async function resync(session: PostgresJsSession): Promise<void> {
  const { results, error } = await session.script(PREPARED_HERE);
  if (error !== undefined) throw error;
  resetPrepared(session.prepared, results[0] as unknown as Record<string, unknown>[]);
}

const claimRowOf = (results: readonly PostgresJsResultLike[]) =>
  results.find((result) => result.length > 0 && typeof result[0] === 'object' && result[0] !== null && 'outcome' in result[0])?.[0] as
    | ClaimRow
    | undefined;

/**
 * The read both claims write ahead of their message: bound, and prepared by postgres.js once per
 * connection, where the store prepares; else literal text, as a simple message needs no `Describe` first.
 */
const recordRead = (store: ScriptedStore, scope: readonly LiteralValue[], prepare: boolean): [string, readonly unknown[]] =>
  prepare ? [store.sql.get, scope] : [invocation(store.sql.get, scope), []];

/**
 * Reads the record and claims-and-begins in one write: `get` as one message, then
 * `claim; claimed-check; BEGIN` as another (see `scriptedTransaction` for why the check lets BEGIN
 * run only for a won claim). postgres.js drops the rows of a message that fails, so a claim not won
 * answers from the read sent just before it; a read that shows nothing the claim could have lost to
 * means the key changed in between, and both go again.
 */
async function readClaimRowAndBegin(session: PostgresJsSession, store: ScriptedStore, input: ClaimInput): Promise<TransactionClaim> {
  const { sql } = store;
  const { scope, claim, claimed: check } = claimRowSteps(store, input);
  const prepare = store.prepare && session.prepares;
  const [read, readParams] = recordRead(store, scope, prepare);
  for (let attempt = 1; attempt <= store.attempts; attempt++) {
    let preparing: { readonly name: string; readonly text: string }[] = [];
    let tracked = new Set<string>();
    const [found, claimed] = await session.pipeline(read, readParams, (prepared) => {
      tracked = prepared;
      const message = preparations([claim.text, check.text, sql.saveOrFail], prepared, prepare);
      preparing = message.preparing;
      return [
        ...preparing.map((p) => p.text),
        invocation(claim.text, claim.args, message.ready),
        invocation(check.text, check.args, message.ready),
        'BEGIN',
      ].join(';\n');
    });
    const { error } = claimed;
    // The PREPAREs precede the claim: when the claim or its check answered, they ran (PREPARE is not transactional).
    if (error === undefined || isClaimNotWon(error) || isLockTimeout(error) || isRetryableConflict(error)) {
      for (const done of preparing) tracked.add(done.name);
    }
    if (error === undefined) {
      const answer = claimAnswer(input.scope, claimRowOf(claimed.results));
      if (answer?.kind !== 'claimed' || claimed.results.at(-1)?.command !== 'BEGIN') {
        await rollback(session);
        throw new Error(`oncely/postgres: the claim answered ${answer?.kind ?? 'nothing'} but the check let BEGIN run`);
      }
      return answer;
    }
    if (isClaimNotWon(error)) {
      if (found.error !== undefined) throw found.error;
      const row = found.results[0]?.[0] as RecordRow | undefined;
      // The read answers when it shows what the claim lost to; a key that changed in between goes again.
      if (row !== undefined && !claimableBy(row, input)) return { kind: 'existing', record: toRecord(input.scope, row) };
      continue;
    }
    if (isPreparedMismatch(error)) {
      await resync(session);
      continue;
    }
    // The claim waited longer than lockTimeoutMs: it wrote nothing, and no transaction is open.
    if (isLockTimeout(error)) return { kind: 'busy' };
    if (isRetryableConflict(error) && attempt < store.attempts) continue;
    throw error;
  }
  throw new Error(`the claim did not settle in ${store.attempts} attempts while the key kept changing`);
}

/** The `unheld` check's row among a message's results: the fence a one-write claim takes. */
const claimedFenceOf = (results: readonly PostgresJsResultLike[]) =>
  Number(
    (results.find((result) => result.length > 0 && typeof result[0] === 'object' && result[0] !== null && 'claimed_fence' in result[0])?.[0] as
      | { claimed_fence: unknown }
      | undefined)?.claimed_fence,
  );

/**
 * The one-write claim on postgres.js: `get` as one message, then `lock; unheld; BEGIN` as another in
 * the same write (see `scriptedTransaction`'s claim for why the lock is the claim and
 * the record is written once, with COMMIT). postgres.js drops the rows of a message that fails, so a
 * claim not won answers from the read sent just before it, or goes again when the read shows nothing
 * it could have lost to. Not READ COMMITTED: the claim row's route.
 */
async function readClaimAndBegin(session: PostgresJsSession, store: ScriptedStore, input: ClaimInput): Promise<[TransactionClaim, boolean]> {
  if (!oneWriteFor(store)) return [await readClaimRowAndBegin(session, store, input), false];
  const { sql } = store;
  const { scope, lock, unheld } = oneWriteSteps(store, input);
  const prepare = store.prepare && session.prepares;
  const [read, readParams] = recordRead(store, scope, prepare);
  for (let attempt = 1; attempt <= store.attempts; attempt++) {
    let preparing: { readonly name: string; readonly text: string }[] = [];
    let tracked = new Set<string>();
    const [found, claimed] = await session.pipeline(read, readParams, (prepared) => {
      tracked = prepared;
      const message = preparations([lock.text, unheld.text, sql.insertOrFail], prepared, prepare);
      preparing = message.preparing;
      return [
        ...preparing.map((p) => p.text),
        // A replay stops at `unheld`, after an uncontended lock, and answers from the read.
        invocation(lock.text, lock.args, message.ready),
        invocation(unheld.text, unheld.args, message.ready),
        'BEGIN',
      ].join(';\n');
    });
    const { error } = claimed;
    // The PREPAREs precede the lock: when it or the check answered, they ran (PREPARE is not transactional).
    if (error === undefined || isClaimNotWon(error) || isNotReadCommitted(error) || isLockTimeout(error) || isRetryableConflict(error)) {
      for (const done of preparing) tracked.add(done.name);
    }
    if (error === undefined) {
      const fence = claimedFenceOf(claimed.results);
      if (!Number.isInteger(fence) || claimed.results.at(-1)?.command !== 'BEGIN') {
        await rollback(session);
        throw new Error('oncely/postgres: the one-write claim answered no fence but BEGIN ran');
      }
      return [wonAt(fence), true];
    }
    if (isClaimNotWon(error)) {
      if (found.error !== undefined) throw found.error;
      const row = found.results[0]?.[0] as RecordRow | undefined;
      // The read answers when it shows what stopped the check; a key that changed in between (a duplicate that waited on the lock) goes again.
      if (row !== undefined && !claimableBy(row, input)) return [{ kind: 'existing', record: toRecord(input.scope, row) }, true];
      continue;
    }
    if (isNotReadCommitted(error)) return [await readClaimRowAndBegin(session, store, input), false];
    if (isPreparedMismatch(error)) {
      await resync(session);
      continue;
    }
    // The lock waited longer than lockTimeoutMs: the block rolled back, and no transaction is open.
    if (isLockTimeout(error)) return [{ kind: 'busy' }, true];
    if (isRetryableConflict(error) && attempt < store.attempts) continue;
    throw error;
  }
  throw new Error(`the claim did not settle in ${store.attempts} attempts while the key kept changing`);
}

/** The outcome of `save; COMMIT`: nothing is saved unless COMMIT itself answered. */
async function saveAndCommit(session: PostgresJsSession, text: string, phase: (now: TransactionPhase) => void): Promise<void> {
  const outcome: MessageOutcome = await session.script(text);
  if (outcome.error === undefined) {
    // A COMMIT of an aborted transaction answers ROLLBACK: nothing was saved.
    if (outcome.results.at(-1)?.command !== 'COMMIT') throw new Error('COMMIT rolled back: the transaction had already failed');
    return;
  }
  const { error } = outcome;
  // The reply was lost: whether COMMIT happened is unknown, and the connection is not reused.
  if (isConnectionLost(error)) {
    session.watch.lost ??= error;
    throw error;
  }
  // The save failed (the transaction is aborted) or COMMIT refused (it ended): a ROLLBACK settles either.
  await rollback(session);
  if (isNotPrepared(error)) session.prepared.clear();
  if (isLostRecord(error) || isNotPrepared(error)) phase('save');
  if (isLostRecord(error)) {
    throw new OncelyError('lease_lost', 'oncely/postgres: the claimed record changed inside the transaction; nothing was committed');
  }
  throw error;
}

/**
 * Transactional mode at the round-trip limit on postgres.js: the read and `claim; check; BEGIN`
 * leave in one write, the handler runs on the reserved connection's own `sql`, and the saved outcome
 * travels with COMMIT. A first request takes the bare transaction's round trips; a replay, a
 * mismatch or a busy key one, and opens no transaction.
 */
export async function pipelinedTransaction<T>(
  session: PostgresJsSession,
  store: ScriptedStore,
  input: ClaimInput,
  work: (claim: TransactionClaim, tx: PostgresTx) => Promise<TransactionDecision<T>>,
  phase: (now: TransactionPhase) => void,
): Promise<T> {
  phase('claim');
  const [claim, oneWrite] = await readClaimAndBegin(session, store, input);
  const opened = claim.kind === 'claimed';
  // No transaction is open for a claim not won: its tx refuses SQL.
  if (!opened) session.closeTx();
  phase('work');
  let decision: TransactionDecision<T>;
  try {
    decision = await work(claim, session.tx);
    // Once the connection is lost nothing can commit, whatever the work answered.
    if (session.watch.lost !== undefined) throw session.watch.lost;
  } catch (error) {
    session.closeTx();
    // A statement that failed with the connection gone needs no ROLLBACK: the server has rolled back.
    if (isConnectionLost(error)) session.watch.lost ??= error;
    if (opened && session.watch.lost === undefined) await rollback(session);
    throw session.watch.lost ?? error;
  }
  session.closeTx();
  if (!opened) return decision.value;
  if (decision.action === 'rollback') {
    await rollback(session);
    return decision.value;
  }
  phase('save');
  let text: string;
  try {
    text = saveAndCommitText(
      store,
      input,
      decision,
      store.prepare && session.prepares ? session.prepared : undefined,
      oneWrite && claim.kind === 'claimed' ? claim : undefined,
    );
  } catch (error) {
    await rollback(session);
    throw error;
  }
  phase('commit');
  await saveAndCommit(session, text, phase);
  return decision.value;
}
