import type { IdempotencyStore, StoredResponse, TerminalState } from '../store.js';
import type { EngineParts } from './engine-events.js';
import type { Lifeline } from './lifeline.js';
import type { PreparedRequest } from './prepared-request.js';
import { checkResponse, toStored } from './stored-response.js';
import type { HandlerContext, IdempotencyRequest, IdempotentResponse, RunResult } from './types.js';

/** What a claimed request ended as: executed, with the state recorded (or `released`). */
export type Executed<B = unknown> = Extract<RunResult<B>, { readonly kind: 'executed' }>;

/**
 * Where lease mode and transaction mode differ on the one path from "claimed" to "completed or
 * released": how the handler's signal and context are built and how an outcome is recorded (lease
 * mode writes it to the store now; transaction mode hands it to the open transaction to commit).
 */
export interface ModeSteps<C extends HandlerContext, R> {
  readonly mode: 'lease' | 'transaction';
  /** The handler's abort signal; in lease mode it watches the lease as well. */
  lifeline(request: IdempotencyRequest): Lifeline;
  context(prepared: PreparedRequest, lifeline: Lifeline, fence: number): C;
  /** The handler threw or answered outside its contract: give the key back before the error leaves. */
  abandon(prepared: PreparedRequest): Promise<void> | undefined;
  /** The replay policy said `release`: nothing is kept, so a retry executes again. */
  release(prepared: PreparedRequest, executed: Executed, startedAt: number): R | Promise<R>;
  /** Keeps the outcome for replay, with the response shaped for storage. */
  complete(
    prepared: PreparedRequest,
    fence: number,
    stored: StoredResponse,
    executed: Executed & { readonly state: TerminalState },
    startedAt: number,
  ): R | Promise<R>;
}

/**
 * The one path from "claimed" to "completed or released", for both modes: run the handler with its
 * context, check its response, ask the replay policy, then record the outcome the mode's way.
 */
export async function runClaimed<C extends HandlerContext, R>(
  engine: EngineParts<IdempotencyStore>,
  prepared: PreparedRequest,
  request: IdempotencyRequest,
  claim: { readonly fence: number; readonly takeover: boolean },
  handler: (context: C) => Promise<IdempotentResponse<unknown>>,
  steps: ModeSteps<C, R>,
  startedAt: number,
): Promise<R> {
  // Guarded here, not only in report: without a listener the event body is not even built (every request passes).
  if (engine.onEvent) engine.report(prepared, { type: 'claimed', mode: steps.mode, fence: claim.fence, takeover: claim.takeover });
  const lifeline = steps.lifeline(request);
  let response: IdempotentResponse<unknown>;
  try {
    response = await handler(steps.context(prepared, lifeline, claim.fence));
    checkResponse(response);
  } catch (error) {
    lifeline.stop();
    await steps.abandon(prepared);
    throw error;
  }
  lifeline.stop();
  const decision = engine.replay(response);
  if (decision === 'release') return await steps.release(prepared, { kind: 'executed', response, state: 'released' }, startedAt);
  const stored = toStored(engine, prepared, response);
  return await steps.complete(prepared, claim.fence, stored, { kind: 'executed', response, state: decision }, startedAt);
}

/** Reports what was recorded, once it is: in lease mode after the store's write, in transaction mode after the commit. */
export function reportRecorded(engine: EngineParts<IdempotencyStore>, prepared: PreparedRequest, executed: Executed, startedAt: number): void {
  if (!engine.onEvent) return;
  if (executed.state === 'released') {
    engine.report(prepared, { type: 'released', reason: 'policy', status: executed.response.status });
  } else {
    engine.report(prepared, {
      type: 'completed',
      state: executed.state,
      status: executed.response.status,
      durationMs: engine.clock.now() - startedAt,
    });
  }
}
