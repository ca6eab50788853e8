import { isOncelyError, OncelyError } from '../errors.js';
import { integerOption } from '../options/option-checks.js';
import { storageGuard } from '../storage/storage-call.js';
import type { StoreOperation } from '../storage/storage-operation.js';
import type { FenceResult, IdempotencyStore, StoredResponse, TerminalState } from '../store.js';
import type { EngineParts } from './engine-events.js';
import { answerExisting } from './existing-record.js';
import { ContextBase } from './handler-context.js';
import { Lifeline, leaseTimer } from './lifeline.js';
import type { PrepareRequest, PreparedRequest } from './prepared-request.js';
import { type ModeSteps, reportRecorded, runClaimed } from './request-path.js';
import { claimProblem, fenceResultProblem, refusal } from './store-answers.js';
import type { HandlerContext, IdempotencyRequest, IdempotentResponse, RunResult } from './types.js';

/**
 * How long a failed `complete` is retried after the handler ran (bounded by the lease): long enough
 * to ride out a database or Redis restart, since an outcome that is never saved runs again once the
 * lease lapses. Backoff doubles from 25 ms up to 1 s.
 */
const COMPLETE_RETRY_MS = 5_000;
const COMPLETE_BACKOFF_MS = { first: 25, max: 1_000 };

/** When a failing `complete` stops being retried: set at its first failure. */
interface RetryBudget {
  giveUpAt?: number;
}

/** Lease mode's `run`: claim (one round trip), run the handler, complete or release (one more). */
export function leaseMode(
  engine: EngineParts<IdempotencyStore>,
  prepare: PrepareRequest,
): <B>(request: IdempotencyRequest, handler: (context: HandlerContext) => Promise<IdempotentResponse<B>>) => Promise<RunResult<B>> {
  const { store, clock, report, leaseMs, retentionMs, onEvent } = engine;

  const storageCall = storageGuard(store.name);
  /** A store call whose every failure leaves as a StorageError, reported as a `storage_error` event when someone listens. */
  const storeCall = <T>(prepared: PreparedRequest, stage: StoreOperation, call: () => T | PromiseLike<T>): Promise<T> =>
    storageCall(stage, call, onEvent ? (error) => report(prepared, { type: 'storage_error', stage, error }) : undefined);

  const completeCall = (prepared: PreparedRequest, state: TerminalState, response: StoredResponse) =>
    storeCall(prepared, 'complete', () => store.complete({ scope: prepared.scope, token: prepared.claim.token, state, response, retentionMs }));

  /** The first attempt answered `ok` resolves without the retry loop's async frame; anything else goes through the loop. */
  function complete(prepared: PreparedRequest, fence: number, state: TerminalState, response: StoredResponse): Promise<void> {
    const first = completeCall(prepared, state, response);
    const slow = () => completeRetrying(prepared, fence, state, response, first);
    return first.then((result) => (result === 'ok' ? undefined : slow()), slow);
  }

  /** `complete` from its first attempt's answer (`first`) on: refusals, a lost fence, storage failures retried within the budget. */
  async function completeRetrying(
    prepared: PreparedRequest,
    fence: number,
    state: TerminalState,
    response: StoredResponse,
    first: Promise<FenceResult>,
  ): Promise<void> {
    const budget: RetryBudget = {};
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await (attempt === 1 ? first : completeCall(prepared, state, response));
        const problem = fenceResultProblem(result);
        if (problem) throw refusal(engine, prepared, 'complete', problem);
        // fence_lost may be this very write answered twice: a client that resends a command whose reply
        // was lost (ioredis after a killed connection) gets the contract's refusal of a second complete.
        if (result === 'ok' || (await landedEarlier(prepared, fence, state))) return;
        report(prepared, { type: 'fence_lost', stage: 'complete' });
        throw new OncelyError('lease_lost', 'oncely: the lease was taken over before the outcome was saved; the result was not recorded');
      } catch (error) {
        await pauseOrGiveUp(error, attempt, budget);
      }
    }
  }

  /**
   * A storage failure after the side effect: waits before the next attempt while the budget lasts,
   * since an unsaved outcome may run twice; anything else, or a spent budget, is thrown. Apart from
   * `complete`, so the path that succeeds at once stays small.
   */
  async function pauseOrGiveUp(error: unknown, attempt: number, budget: RetryBudget): Promise<void> {
    if (!isOncelyError(error, 'storage_error')) throw error;
    const delay = Math.min(COMPLETE_BACKOFF_MS.first * 2 ** (attempt - 1), COMPLETE_BACKOFF_MS.max);
    const now = clock.now();
    budget.giveUpAt ??= now + Math.min(COMPLETE_RETRY_MS, leaseMs);
    if (now + delay > budget.giveUpAt) throw error;
    await clock.sleep(delay);
  }

  /**
   * `fence_lost` may mean an earlier write of ours landed and only its reply was lost (an attempt that
   * failed, or a resend inside the client): the record is then terminal with our fence (a takeover
   * would have raised it) and our fingerprint.
   */
  async function landedEarlier(prepared: PreparedRequest, fence: number, state: TerminalState): Promise<boolean> {
    const record = await storeCall(prepared, 'get', () => store.get(prepared.scope));
    return record?.state === state && record.fence === fence && record.fingerprint === prepared.claim.fingerprint;
  }

  async function release(prepared: PreparedRequest): Promise<void> {
    try {
      const result = await storeCall(prepared, 'release', () => store.release({ scope: prepared.scope, token: prepared.claim.token }));
      const problem = fenceResultProblem(result);
      if (problem) throw refusal(engine, prepared, 'release', problem);
      if (result === 'fence_lost') report(prepared, { type: 'fence_lost', stage: 'release' });
    } catch {
      // The lease will lapse by itself; the caller gets the original outcome.
    }
  }

  const timer = leaseTimer(clock);

  /** Lease mode's steps: its signal aborts when the lease lapses, extendLease renews it, outcomes go to the store now. */
  const steps: ModeSteps<HandlerContext, RunResult> = {
    mode: 'lease',
    lifeline(request) {
      const lifeline = new Lifeline(request, timer);
      lifeline.renew(leaseMs);
      return lifeline;
    },
    context(prepared, lifeline, fence) {
      return new ContextBase(prepared, lifeline, fence, async (ms = leaseMs) => {
        integerOption('oncely: extendLease ms', ms);
        const result = await storeCall(prepared, 'extend', () =>
          store.extend({ scope: prepared.scope, token: prepared.claim.token, leaseMs: ms }),
        );
        const problem = fenceResultProblem(result);
        if (problem) {
          // Whether the lease still holds is unknown: the handler's signal aborts as for a lost lease.
          const refused = refusal(engine, prepared, 'extend', problem);
          lifeline.abort(refused);
          throw refused;
        }
        if (result === 'fence_lost') {
          report(prepared, { type: 'fence_lost', stage: 'extend' });
          const lost = new OncelyError('lease_lost', 'oncely: the lease was taken over by another attempt');
          lifeline.abort(lost);
          throw lost;
        }
        lifeline.renew(ms);
      });
    },
    async abandon(prepared) {
      await release(prepared);
      report(prepared, { type: 'released', reason: 'error' });
    },
    async release(prepared, executed, startedAt) {
      await release(prepared);
      reportRecorded(engine, prepared, executed, startedAt);
      return executed;
    },
    complete(prepared, fence, stored, executed, startedAt) {
      return complete(prepared, fence, executed.state, stored).then(() => {
        reportRecorded(engine, prepared, executed, startedAt);
        return executed;
      });
    },
  };

  return async <B>(request: IdempotencyRequest, handler: (context: HandlerContext) => Promise<IdempotentResponse<B>>) => {
    const pending = prepare(request);
    const prepared = pending instanceof Promise ? await pending : pending;
    const claim = await storeCall(prepared, 'claim', () => store.claim(prepared.claim));
    const problem = claimProblem(claim);
    if (problem) throw refusal(engine, prepared, 'claim', problem);
    if (claim.kind === 'existing') return answerExisting<B>(engine, prepared, claim.record);
    // Only the `completed` event reads the start time.
    const startedAt = onEvent ? clock.now() : 0;
    return (await runClaimed(engine, prepared, request, claim, handler, steps, startedAt)) as RunResult<B>;
  };
}
