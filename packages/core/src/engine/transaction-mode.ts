import { isOncelyError, OncelyError, toStorageError } from '../errors.js';
import { describeAnswer } from '../storage/answer-shapes.js';
import {
  type IdempotencyStore,
  isTransactionalStore,
  type TransactionClaim,
  type TransactionDecision,
  type TransactionOf,
} from '../store.js';
import type { EngineParts } from './engine-events.js';
import { answerExisting } from './existing-record.js';
import { ContextBase } from './handler-context.js';
import { Lifeline } from './lifeline.js';
import type { PrepareRequest } from './prepared-request.js';
import { type Executed, type ModeSteps, reportRecorded, runClaimed } from './request-path.js';
import { refusal, transactionClaimProblem } from './store-answers.js';
import type { IdempotencyRequest, IdempotentResponse, JoinOptions, RunResult, TransactionHandlerContext } from './types.js';

/** The transaction holds the row lock for as long as it is open: nothing to renew. */
const extendLease = async () => undefined;

/** Transaction mode's steps: only the caller's abort reaches the signal; outcomes commit with the transaction. */
function transactionSteps<Tx>(engine: EngineParts<IdempotencyStore>, tx: Tx): ModeSteps<TransactionHandlerContext<Tx>, TransactionDecision<RunResult>> {
  return {
    mode: 'transaction',
    lifeline: (request) => new Lifeline(request),
    context: (prepared, lifeline, fence) => Object.assign(new ContextBase(prepared, lifeline, fence, extendLease), { tx }),
    // Throwing out of the transaction's work rolls the claim back.
    abandon: () => undefined,
    release: (_prepared, executed) => ({ action: 'rollback', value: executed }),
    complete: (_prepared, _fence, stored, executed) => ({
      action: 'commit',
      state: executed.state,
      response: stored,
      retentionMs: engine.retentionMs,
      value: executed,
    }),
  };
}

/** Transaction mode's `runInTransaction`: claim, handler writes and saved result commit in one transaction. */
export function transactionMode<S extends IdempotencyStore>(
  engine: EngineParts<S>,
  prepare: PrepareRequest,
): <B>(
  request: IdempotencyRequest,
  handler: (context: TransactionHandlerContext<TransactionOf<S>>) => Promise<IdempotentResponse<B>>,
  options?: JoinOptions<S>,
) => Promise<RunResult<B>> {
  const { store, clock, report, leaseMs } = engine;
  return async <B>(
    request: IdempotencyRequest,
    handler: (context: TransactionHandlerContext<TransactionOf<S>>) => Promise<IdempotentResponse<B>>,
    options?: JoinOptions<S>,
  ) => {
    if (!isTransactionalStore(store)) {
      throw new OncelyError('capability_missing', `oncely: the ${store.name} store does not support transactions; use run() (lease mode)`);
    }
    const joining = options !== undefined;
    if (joining && (options?.tx === undefined || options.tx === null)) {
      throw new OncelyError('invalid_option', 'oncely: runInTransaction options.tx must be the open transaction to join');
    }
    if (joining && typeof store.join !== 'function') {
      throw new OncelyError('capability_missing', `oncely: the ${store.name} store cannot join a transaction the caller opened`);
    }
    const prepared = await prepare(request);
    const startedAt = clock.now();
    let executed = false;
    let decided: { readonly value: RunResult<B> } | undefined;
    const decide = async (claim: TransactionClaim, tx: unknown): Promise<TransactionDecision<RunResult<B>>> => {
      const problem = transactionClaimProblem(claim);
      if (problem) throw refusal(engine, prepared, 'claim', problem);
      if (claim.kind === 'busy') {
        const retryAfterMs = Math.min(leaseMs, 1_000);
        report(prepared, { type: 'in_progress', retryAfterMs });
        return { action: 'rollback', value: { kind: 'in_progress', retryAfterMs } };
      }
      if (claim.kind === 'existing') {
        return { action: 'rollback', value: await answerExisting<B>(engine, prepared, claim.record) };
      }
      executed = true;
      const steps = transactionSteps(engine, tx as TransactionOf<S>);
      return (await runClaimed(engine, prepared, request, claim, handler, steps, startedAt)) as TransactionDecision<RunResult<B>>;
    };
    const work = async (claim: TransactionClaim, tx: unknown) => {
      const decision = await decide(claim, tx);
      decided = { value: decision.value };
      return decision;
    };
    let result: RunResult<B>;
    try {
      result = joining ? await store.join!(options.tx, prepared.claim, work) : await store.transaction(prepared.claim, work);
    } catch (error) {
      if (executed) report(prepared, { type: 'released', reason: 'error' });
      // The handler's own errors pass through untouched; the rollback already undid the claim. Once the
      // work has decided, whatever fails is the store's (its COMMIT or ROLLBACK): a StorageError.
      if (executed && !decided) throw error;
      if (isOncelyError(error)) throw error;
      const failure = toStorageError(store.name, decided ? 'commit' : 'transaction', error);
      report(prepared, { type: 'storage_error', stage: decided ? 'commit' : 'transaction', error: failure });
      throw failure;
    }
    // A transaction answers with the value its work decided, and only after deciding it.
    if (!decided || result !== decided.value) throw refusal(engine, prepared, 'transaction', `a transaction result its work did not decide (${describeAnswer(result)})`);
    if (result.kind === 'executed') reportRecorded(engine, prepared, result as Executed, startedAt);
    return result;
  };
}
