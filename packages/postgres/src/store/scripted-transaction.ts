import { OncelyError } from '@oncely/core';
import type { ClaimInput, TransactionClaim, TransactionDecision } from '@oncely/core/adapter';
import type { PostgresTx } from '../driver/postgres-db.js';
import type { PgSession } from '../driver/sql-driver.js';
import { resetPrepared } from '../driver/prepared-on.js';
import { isLockTimeout, isNotPrepared, isPreparedMismatch, isRetryableConflict, sqlState } from '../driver/sql-state.js';
import { invocation, PREPARED_HERE, preparations } from '../sql/invocation.js';
import type { LiteralValue } from '../sql/literal.js';
import type { StoreStatements } from '../sql/statements.js';
import { type ClaimRow, claimAnswer, type RecordRow, responseParams, scopeParams, toRecord } from './record.js';

/** Where a transaction stood when it failed, for the error's `operation`. */
export type TransactionPhase = 'begin' | 'claim' | 'work' | 'save' | 'commit';

/** What a scripted transaction needs from its store. */
export interface ScriptedStore {
  readonly sql: StoreStatements;
  /** `PREPARE` the statements once per connection (the `preparedStatements` option). */
  readonly prepare: boolean;
  /** `lock_timeout` for the claim's waits, or null. */
  readonly lockTimeout: string | null;
  readonly attempts: number;
  /** `SET TRANSACTION ISOLATION LEVEL …` to open the transaction with (an ORM's level), or none: the connection's default. */
  readonly isolation?: string | null;
  /** The one-write claim (the `lockClaim` option): an advisory lock with BEGIN, the completed record inserted with COMMIT. */
  readonly lockClaim?: boolean;
}


/** The save's sentinel: the claimed row was not there to update (22P02 from a cast that names it). */
export const isLostRecord = (error: unknown) =>
  sqlState(error) === '22P02' && String((error as Error).message).includes('the claimed record changed');

/** A completed record still live: what a read-first replay answers with. */
export const completedRow = (row: RecordRow | undefined): row is RecordRow => row !== undefined && row.state !== 'in_progress';

/** Re-reads what this connection has prepared: what was tracked turned out wrong (42P05, 26000). */
async function resync(session: PgSession): Promise<void> {
  const { statements, error } = await session.script(PREPARED_HERE);
  if (error !== undefined) throw error;
  resetPrepared(session.prepared, statements[0]?.rows);
}

/** ROLLBACK that never throws: a connection that cannot roll back is destroyed, and the server rolls back. */
async function rollback(session: PgSession): Promise<void> {
  const outcome = await session.script('ROLLBACK').catch((error: unknown) => ({ statements: [], error }));
  if (outcome.error !== undefined) session.broken(outcome.error);
}

/**
 * Claims and opens the transaction in ONE message, `claim; claimed-check; BEGIN`: statements before
 * a BEGIN in one simple-protocol message run in an implicit transaction block that BEGIN turns into
 * the transaction, so a won claim is its first write. A claim not won (a replay, a mismatch, a held
 * key) fails the check: the block rolls back (the claim wrote nothing: a live record is neither
 * updated nor inserted over), BEGIN never runs, and the claim's row answers. No read ahead of the
 * claim: pg keeps the rows of the statements before a failure, and while replays dominate the store
 * reads first anyway, so a first request runs three statements, not five.
 */
async function claimRowAndBegin(session: PgSession, store: ScriptedStore, input: ClaimInput): Promise<TransactionClaim> {
  const { sql } = store;
  const { claim, claimed: check } = claimRowSteps(store, input);
  for (let attempt = 1; attempt <= store.attempts; attempt++) {
    // Only here, outside any transaction: a PREPARE that fails inside one would abort it.
    const { preparing, ready } = preparations([claim.text, check.text, sql.saveOrFail], session.prepared, store.prepare);
    // The isolation level goes first: PostgreSQL refuses one once a statement has taken a snapshot.
    const opening = store.isolation ? [store.isolation] : [];
    const lead = opening.length + preparing.length;
    const text = [
      ...opening,
      ...preparing.map((p) => p.text),
      invocation(claim.text, claim.args, ready),
      invocation(check.text, check.args, ready),
      'BEGIN',
    ].join(';\n');
    const { statements, error } = await session.script(text);
    // PREPARE is not transactional: those that ran stand even though the message failed later.
    for (const done of preparing.slice(0, Math.max(0, statements.length - opening.length))) session.prepared.add(done.name);
    const claimed = statements[lead];
    if (claimed === undefined) {
      if (isPreparedMismatch(error)) {
        await resync(session);
        continue;
      }
      // The claim waited longer than lockTimeoutMs: it wrote nothing, and no transaction is open.
      if (isLockTimeout(error)) return { kind: 'busy' };
      if (isRetryableConflict(error) && attempt < store.attempts) continue;
      throw error;
    }
    const answer = claimAnswer(input.scope, claimed.rows[0] as ClaimRow | undefined);
    // A concurrent commit landed between the claim's snapshot and its write: the check failed, try again.
    if (answer === undefined) continue;
    const opened = error === undefined && statements.at(-1)?.command === 'BEGIN';
    if ((answer.kind === 'claimed') !== opened) {
      if (opened) await rollback(session);
      throw error ?? new Error(`oncely/postgres: the claim answered ${answer.kind} but the check let BEGIN run`);
    }
    return answer;
  }
  throw new Error(`the claim did not settle in ${store.attempts} attempts while the key kept changing`);
}

/** The claim check's sentinel: the key is held or live, so BEGIN did not run (22P02 from a cast that names it). */
export const isClaimNotWon = (error: unknown) => sqlState(error) === '22P02' && String((error as Error).message).includes('the claim was not won');

/** The one-write claim's sentinel: the transaction is not READ COMMITTED, so its snapshot predates the lock (22P02). */
export const isNotReadCommitted = (error: unknown) =>
  sqlState(error) === '22P02' && String((error as Error).message).includes('the claim needs read committed');

/** Free to claim by this request: the claim should have taken it, so something changed between the read and the claim. */
export const claimableBy = (row: RecordRow, input: ClaimInput) =>
  row.state === 'in_progress' && (row.lease_remaining_ms ?? 0) <= 0 && row.fingerprint === input.fingerprint;

/** Whether a store's transactions may use the one-write claim: only READ COMMITTED reads, after the lock, what the lock waited for. */
export const oneWriteFor = (store: ScriptedStore) => store.lockClaim === true && (!store.isolation || / READ (UN)?COMMITTED$/.test(store.isolation));

/** The claim row's statements and their arguments, `claim` then its `claimed` check; the claim is bounded by `lockTimeoutMs` when set. */
export function claimRowSteps(store: ScriptedStore, input: ClaimInput) {
  const { sql } = store;
  const scope = scopeParams(input.scope);
  const unbounded = [...scope, input.fingerprint, input.token, input.leaseMs, input.retentionMs];
  const claim = store.lockTimeout === null ? { text: sql.claim, args: unbounded } : { text: sql.claimBounded, args: [...unbounded, store.lockTimeout] };
  return { scope, claim, claimed: { text: sql.claimed, args: [...scope, input.token] } };
}

/** The one-write claim's statements and their arguments; the lock is bounded by `lockTimeoutMs` when set. */
export function oneWriteSteps(store: ScriptedStore, input: ClaimInput) {
  const { sql } = store;
  const scope = scopeParams(input.scope);
  const lock = store.lockTimeout === null ? { text: sql.lock, args: scope } : { text: sql.lockBounded, args: [...scope, store.lockTimeout] };
  return { scope, lock, unheld: { text: sql.unheld, args: [...scope, input.fingerprint] } };
}

/** A won one-write claim: `unheld` answered the fence it takes. */
export const wonAt = (fence: number): TransactionClaim => ({ kind: 'claimed', fence, takeover: fence > 1 });

/**
 * Claims and opens the transaction in ONE message, `lock; get; unheld; BEGIN`, writing nothing: the
 * advisory lock is the claim, and the record is written once, complete, with COMMIT. Statements
 * before a BEGIN in one simple-protocol message run in an implicit transaction block that BEGIN
 * turns into the transaction, so the lock is held to its end, and the `get` after it sees every
 * commit it waited for. A key held or live (a replay, a mismatch, a lease holder) fails `unheld`:
 * the block rolls back (releasing the lock), BEGIN never runs, and the `get`'s row answers. Not READ
 * COMMITTED (the snapshot would predate the lock): the claim row and its check instead.
 */
async function claimAndBegin(session: PgSession, store: ScriptedStore, input: ClaimInput): Promise<[TransactionClaim, boolean]> {
  if (!oneWriteFor(store)) return [await claimRowAndBegin(session, store, input), false];
  const { sql } = store;
  const { scope, lock, unheld } = oneWriteSteps(store, input);
  for (let attempt = 1; attempt <= store.attempts; attempt++) {
    // Only here, outside any transaction: a PREPARE that fails inside one would abort it.
    const { preparing, ready } = preparations([lock.text, sql.get, unheld.text, sql.insertOrFail], session.prepared, store.prepare);
    const opening = store.isolation ? [store.isolation] : [];
    const lead = opening.length + preparing.length;
    const text = [
      ...opening,
      ...preparing.map((p) => p.text),
      invocation(lock.text, lock.args, ready),
      invocation(sql.get, scope, ready),
      invocation(unheld.text, unheld.args, ready),
      'BEGIN',
    ].join(';\n');
    const { statements, error } = await session.script(text);
    // PREPARE is not transactional: those that ran stand even though the message failed later.
    for (const done of preparing.slice(0, Math.max(0, statements.length - opening.length))) session.prepared.add(done.name);
    if (isClaimNotWon(error)) {
      const found = statements[lead + 1]?.rows[0] as RecordRow | undefined;
      if (found !== undefined && !claimableBy(found, input)) return [{ kind: 'existing', record: toRecord(input.scope, found) }, true];
      // The key changed between the read and the check (a lease lapsed or a record expired in between): go again.
      continue;
    }
    if (isNotReadCommitted(error)) return [await claimRowAndBegin(session, store, input), false];
    if (isPreparedMismatch(error)) {
      await resync(session);
      continue;
    }
    // The lock waited longer than lockTimeoutMs: the block rolled back, and no transaction is open.
    if (isLockTimeout(error)) return [{ kind: 'busy' }, true];
    if (isRetryableConflict(error) && attempt < store.attempts) continue;
    if (error !== undefined) throw error;
    const fence = Number((statements[lead + 2]?.rows[0] as { claimed_fence?: unknown } | undefined)?.claimed_fence);
    if (statements.at(-1)?.command !== 'BEGIN' || !Number.isInteger(fence)) {
      await rollback(session);
      throw new Error('oncely/postgres: the one-write claim answered no fence but BEGIN ran');
    }
    return [wonAt(fence), true];
  }
  throw new Error(`the claim did not settle in ${store.attempts} attempts while the key kept changing`);
}

/**
 * The saved outcome and COMMIT as one message: `saveOrFail` with the decision as literals (invoking
 * the prepared statement where `prepared` names it), so a lost record aborts the transaction first.
 */
export function saveAndCommitText(
  store: ScriptedStore,
  input: ClaimInput,
  decision: Extract<TransactionDecision<unknown>, { action: 'commit' }>,
  prepared: ReadonlySet<string> | undefined,
  oneWrite?: { readonly fence: number },
): string {
  const response = responseParams(decision.response) as LiteralValue[];
  const scope = scopeParams(input.scope);
  // A one-write claim wrote nothing yet: the completed record is inserted here, whole.
  const [text, args]: [string, LiteralValue[]] = oneWrite
    ? [store.sql.insertOrFail, [...scope, input.fingerprint, oneWrite.fence, decision.state, ...response, decision.retentionMs]]
    : [store.sql.saveOrFail, [...scope, input.token, decision.state, ...response, decision.retentionMs]];
  return `${invocation(text, args, prepared)};\nCOMMIT`;
}

/**
 * Transactional mode at the round-trip limit on one `pg` connection: the claim travels with BEGIN
 * and the saved outcome with COMMIT, so a first request adds no round trip to the business
 * transaction, and a replay, a mismatch or a busy key is one message that opens no transaction.
 */
export async function scriptedTransaction<T>(
  session: PgSession,
  store: ScriptedStore,
  input: ClaimInput,
  work: (claim: TransactionClaim, tx: PostgresTx) => Promise<TransactionDecision<T>>,
  phase: (now: TransactionPhase) => void,
): Promise<T> {
  phase('claim');
  const [claim, oneWrite] = await claimAndBegin(session, store, input);
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
    if (opened) await rollback(session);
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
    text = saveAndCommitText(store, input, decision, store.prepare ? session.prepared : undefined, oneWrite && claim.kind === 'claimed' ? claim : undefined);
  } catch (error) {
    await rollback(session);
    throw error;
  }
  phase('commit');
  const { statements, error } = await session.script(text).catch((lost: unknown) => {
    // The reply was lost: whether COMMIT happened is unknown, so the connection is not reused.
    session.broken(lost);
    throw lost;
  });
  if (error !== undefined && statements.length === 0) {
    // The save failed, so the transaction aborted before COMMIT: nothing is saved.
    phase('save');
    await rollback(session);
    if (isNotPrepared(error)) session.prepared.clear();
    if (isLostRecord(error)) {
      throw new OncelyError('lease_lost', 'oncely/postgres: the claimed record changed inside the transaction; nothing was committed');
    }
    throw error;
  }
  // COMMIT refused (a serialization failure, a deferred constraint): the transaction ended with it.
  if (error !== undefined) throw error;
  // pg reports COMMIT of an aborted transaction as ROLLBACK: nothing was saved.
  if (statements[1]?.command !== 'COMMIT') throw new Error('COMMIT rolled back: the transaction had already failed');
  return decision.value;
}
