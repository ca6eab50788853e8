import { OncelyError } from '@oncely/core';
import type { ClaimInput, TransactionClaim, TransactionDecision } from '@oncely/core/adapter';
import type { PostgresTx } from '../driver/postgres-db.js';
import type { TransactionPhase } from './scripted-transaction.js';

/** The savepoint oncely's part of a joined transaction runs under. */
const SAVEPOINT = 'oncely_join';

/** What a joined transaction needs from its store: the claim and the save, inside a transaction. */
export interface TransactionSteps {
  /** Claim-or-read in `on`; `busy` when the wait for a concurrent holder timed out (the transaction is then aborted). */
  claim(on: PostgresTx, input: ClaimInput): Promise<TransactionClaim>;
  /** Saves the decided outcome in `on`; throws `lease_lost` when the claimed row is not there to update. */
  save(on: PostgresTx, input: ClaimInput, decision: Extract<TransactionDecision<unknown>, { action: 'commit' }>): Promise<void>;
}

/** Undoes oncely's part and forgets the savepoint, so the caller's transaction goes on as if it never ran. */
async function undo(on: PostgresTx): Promise<void> {
  await on.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
  await on.query(`RELEASE SAVEPOINT ${SAVEPOINT}`);
}

/**
 * claim → work → save inside a transaction the caller opened (`on` its statements, `tx` what the
 * handler gets), under a savepoint: a handler error, a rollback decision or a busy claim rolls back
 * to it, leaving the caller's transaction usable; a save stays under it (never released: one round
 * trip less) and commits when the caller commits. Never sends COMMIT or ROLLBACK of its own.
 */
export async function joinedTransaction<Tx, T>(
  steps: TransactionSteps,
  on: PostgresTx,
  tx: Tx,
  input: ClaimInput,
  work: (claim: TransactionClaim, tx: Tx) => Promise<TransactionDecision<T>>,
  phase: (now: TransactionPhase) => void,
): Promise<T> {
  phase('begin');
  await on.query(`SAVEPOINT ${SAVEPOINT}`);
  phase('claim');
  let claim: TransactionClaim;
  try {
    claim = await steps.claim(on, input);
  } catch (error) {
    await undo(on).catch(() => undefined);
    throw error;
  }
  if (claim.kind !== 'claimed') {
    // A replay or a mismatch wrote nothing (its savepoint stays until the caller ends); a busy claim aborted the savepoint's part.
    if (claim.kind === 'busy') await undo(on);
    phase('work');
    return (await work(claim, tx)).value;
  }
  phase('work');
  let decision: TransactionDecision<T>;
  try {
    decision = await work(claim, tx);
  } catch (error) {
    // The handler's error is what the caller sees; its transaction stays usable if the connection does.
    await undo(on).catch(() => undefined);
    throw error;
  }
  if (decision.action === 'rollback') {
    await undo(on);
    return decision.value;
  }
  phase('save');
  try {
    await steps.save(on, input, decision);
  } catch (error) {
    await undo(on).catch(() => undefined);
    throw error;
  }
  // No RELEASE: a savepoint left standing costs nothing until the caller's COMMIT, and saves a round trip.
  return decision.value;
}

/** The save of a claimed record found no row to update: nothing of oncely's is kept. */
export const lostRecord = () =>
  new OncelyError('lease_lost', 'oncely/postgres: the claimed record changed inside the transaction; nothing was committed');
