import { type Clock, systemClock } from '../clock.js';
import { isOncelyError, OncelyError } from '../errors.js';
import { type EventListener, eventEmitter } from '../events.js';
import { backgroundLoop, type LoopStatus } from '../loop/background-loop.js';
import { integerOption } from '../options/option-checks.js';
import type { ReplayPolicy } from '../replay-policy.js';
import type { Scope } from '../scope.js';
import type { IdempotencyStore } from '../store.js';
import { type FlowStore, isFlowStore } from './flow-store.js';
import { type FlowBody, type FlowResponse, flowRunner } from './run-flow.js';

/** What a completer did with one abandoned flow. */
export type CompleterEvent =
  | { readonly type: 'flow_completed'; readonly at: number; readonly scope: Scope; readonly status: number }
  | { readonly type: 'flow_failed_final'; readonly at: number; readonly scope: Scope; readonly status: number }
  | { readonly type: 'flow_skipped'; readonly at: number; readonly scope: Scope; readonly reason: 'unknown_operation' | 'owned' }
  | { readonly type: 'flow_error'; readonly at: number; readonly scope: Scope; readonly error: unknown }
  | { readonly type: 'completer_error'; readonly at: number; readonly error: unknown; readonly retryInMs: number };

/** Options of {@link createCompleter}. */
export interface CompleterOptions {
  /** A store with `capabilities.flows`: the same one the flows' engine uses. */
  readonly store: IdempotencyStore;
  /** The flow bodies by operation name (`payments.create.v1`): the same code the request handlers run. */
  readonly flows: Readonly<Record<string, FlowBody<never>>>;
  /** The lease a completer takes over with (default 30 s). */
  readonly leaseMs?: number;
  /** How long the final outcome is kept (default one day), as the engine's `retentionMs`. */
  readonly retentionMs?: number;
  readonly replay?: ReplayPolicy;
  /** Abandoned flows taken per round (default 20). */
  readonly batchSize?: number;
  /** Pause between rounds (default 1 000 ms). */
  readonly intervalMs?: number;
  /** Names the completer in errors and events (default `completer`). */
  readonly name?: string;
  readonly onEvent?: EventListener<CompleterEvent>;
  readonly clock?: Clock;
  readonly random?: () => number;
}

/** What one round did. */
export interface CompleterRound {
  readonly completed: number;
  readonly failedFinal: number;
  readonly skipped: number;
  readonly errors: number;
}

/** A background loop that finishes flows whose owner went away. */
export interface Completer {
  readonly status: LoopStatus;
  /** Starts the rounds in the background. */
  start(): Promise<void>;
  /** Lets the round in flight finish, then stops. */
  stop(): Promise<void>;
  /** One round, outside the loop (the loop must be idle). */
  runOnce(): Promise<CompleterRound>;
}

/** A misuse error: a changed flow or a non-JSON result will fail the same way on every attempt. */
const isPermanent = (error: unknown) => isOncelyError(error, 'invalid_state');

/**
 * Creates a completer: every round lists flows whose lease lapsed mid-flow, takes each over exactly
 * as a client retry would (a claim with the recorded fingerprint: fence + 1, one winner among any
 * number of completers and clients) and drives it from its last recovery point to the end. A flow
 * that cannot finish (it changed, or answers outside its contract) is recorded as `failed_final`
 * with a 500 problem body; any other error leaves it for a later round.
 */
export function createCompleter(options: CompleterOptions): Completer {
  const { flows, clock = systemClock, replay } = options;
  if (!options.store || !isFlowStore(options.store)) {
    const name = options.store ? `; ${options.store.name} has none` : '';
    throw new OncelyError('capability_missing', `oncely: a completer needs a store with capabilities.flows${name}`);
  }
  const store: FlowStore = options.store;
  if (!flows || typeof flows !== 'object') throw new OncelyError('invalid_option', 'oncely: createCompleter needs { flows: { [operation]: body } }');
  const name = options.name ?? 'completer';
  const leaseMs = integerOption('oncely: completer leaseMs', options.leaseMs ?? 30_000);
  const retentionMs = integerOption('oncely: completer retentionMs', options.retentionMs ?? 86_400_000);
  const batchSize = integerOption('oncely: completer batchSize', options.batchSize ?? 20);
  const intervalMs = integerOption('oncely: completer intervalMs', options.intervalMs ?? 1_000, 0);
  const emit = eventEmitter<CompleterEvent>(options.onEvent, clock);
  let count = 0;
  const prefix = `${globalThis.crypto.randomUUID()}.completer.`;
  const runner = flowRunner({ store, leaseMs, retentionMs, replay, clock, nextToken: () => prefix + (count++).toString(36) });

  const finalFailure = (error: unknown): FlowResponse | undefined =>
    isPermanent(error)
      ? {
          status: 500,
          headers: { 'content-type': 'application/problem+json' },
          body: { type: 'about:blank', title: 'The operation could not be completed', status: 500, code: 'invalid_state', detail: (error as Error).message },
        }
      : undefined;

  async function runOnce(): Promise<CompleterRound> {
    const round = { completed: 0, failedFinal: 0, skipped: 0, errors: 0 };
    for (const { scope, fingerprint } of await store.listAbandonedFlows(batchSize)) {
      const body = Object.hasOwn(flows, scope.operation) ? flows[scope.operation] : undefined;
      if (!body) {
        round.skipped += 1;
        emit({ type: 'flow_skipped', scope, reason: 'unknown_operation' });
        continue;
      }
      try {
        const result = await runner.resume(scope, fingerprint, body, finalFailure);
        if (result.kind !== 'executed') {
          round.skipped += 1;
          emit({ type: 'flow_skipped', scope, reason: 'owned' });
        } else if (result.state === 'failed_final') {
          round.failedFinal += 1;
          emit({ type: 'flow_failed_final', scope, status: result.response.status });
        } else {
          round.completed += 1;
          emit({ type: 'flow_completed', scope, status: result.response.status });
        }
      } catch (error) {
        round.errors += 1;
        emit({ type: 'flow_error', scope, error });
      }
    }
    return round;
  }

  const loop = backgroundLoop({
    label: `oncely: completer ${name}`,
    kind: 'completer',
    clock,
    random: options.random ?? Math.random,
    backoff: { baseMs: Math.max(intervalMs, 10), capMs: Math.max(intervalMs, 10) * 30 },
    round: async () => {
      await runOnce();
      await loop.pause(intervalMs);
    },
    onFailure: (error, retryInMs) => emit({ type: 'completer_error', error, retryInMs }),
  });

  return {
    get status() {
      return loop.status;
    },
    start: () => loop.start(),
    stop: () => loop.stop(),
    runOnce: () => {
      loop.assertIdle('runOnce');
      return runOnce();
    },
  };
}
