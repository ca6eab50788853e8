import { type Clock, systemClock } from '../clock.js';
import { isOncelyError, OncelyError, toStorageError } from '../errors.js';
import { type FingerprintOptions, fingerprintNow } from '../fingerprint/fingerprint.js';
import { defaultReplayPolicy, type ReplayPolicy } from '../replay-policy.js';
import { type Scope, toScope } from '../scope.js';
import type { StoreOperation } from '../storage/storage-operation.js';
import type { IdempotencyRecord, IdempotencyStore, StoredResponse, TerminalState } from '../store.js';
import type { IdempotencyRequest } from '../engine/idempotency-request.js';
import { assertStepName, downstreamKey } from './downstream-key.js';
import { type FlowPhaseKind, type FlowState, type FlowStore, type FlowTransactionOf, isFlowStore } from './flow-store.js';
import { fromJsonText, toJsonText } from './json-text.js';

/** The final response of a flow: what the client gets and what a retry replays. `body` must be JSON. */
export type FlowResponse<B = unknown> = Omit<StoredResponse, 'body' | 'bodyOmitted'> & { readonly body?: B };

/**
 * One attempt at a flow: the scope, the client's key and the request the flow runs on, as for `run`
 * (the payload must be JSON: it is recorded so a completer can finish the flow). A flow stores only
 * its final response, so there is no per-request `maxStoredBytes`.
 */
export type FlowRequest = Omit<IdempotencyRequest, 'maxStoredBytes'>;

/** The outcome of a flow attempt: the same shapes as `run`'s. */
export type FlowResult<B = unknown> =
  | { readonly kind: 'executed'; readonly response: FlowResponse<B>; readonly state: TerminalState | 'released' }
  | { readonly kind: 'replayed'; readonly response: FlowResponse<B>; readonly state: TerminalState }
  | { readonly kind: 'in_progress'; readonly retryAfterMs: number }
  | { readonly kind: 'mismatch' };

/** What a flow's body receives. */
export interface Flow<Tx = unknown> {
  /** The request payload the flow runs on: the client's, or the recorded one when a completer resumes. */
  readonly request: unknown;
  readonly scope: Scope;
  /** The fencing counter of this owner. */
  readonly fence: number;
  /** Aborted when the lease lapses or the caller's signal aborts. */
  readonly signal: AbortSignal;
  /**
   * A local phase: `work`'s writes in `tx` and the next recovery point commit together. Its result
   * (JSON) is kept: a resumed flow gets it back without running `work` again.
   */
  atomic<T>(name: string, work: (tx: Tx) => Promise<T> | T): Promise<T>;
  /**
   * A foreign call: `call` receives this step's derived key (forward it downstream as that system's
   * idempotency key) and the flow's signal; its result (JSON) is recorded as a recovery point of its own.
   */
  remote<T>(name: string, call: (key: string, signal: AbortSignal) => Promise<T> | T): Promise<T>;
  /** The derived downstream key of `step`, as `remote` passes it. */
  downstreamKey(step: string): Promise<string>;
}

/** A flow's body: phases, then the final response. */
export type FlowBody<Tx = unknown, B = unknown> = (flow: Flow<Tx>) => Promise<FlowResponse<B>>;

/** Options of {@link flowRunner}: the engine's, or a completer's. */
export interface FlowRunnerOptions {
  readonly store: IdempotencyStore;
  readonly leaseMs: number;
  readonly retentionMs: number;
  readonly replay?: ReplayPolicy;
  readonly fingerprint?: FingerprintOptions;
  readonly clock?: Clock;
  readonly nextToken: () => string;
}

/** Runs flows for clients (`run`) and for completers (`resume`). */
export interface FlowRunner {
  run<B>(request: FlowRequest, body: FlowBody<never, B>): Promise<FlowResult<B>>;
  /**
   * Takes over the lapsed flow of `scope` (with its recorded fingerprint) and drives it to the end.
   * When `body` throws and `finalFailure` turns the error into a response, that response is recorded
   * as `failed_final` instead of handing the flow over again.
   */
  resume<B>(
    scope: Scope,
    fingerprint: string,
    body: FlowBody<never, B>,
    finalFailure?: (error: unknown) => FlowResponse | undefined,
  ): Promise<FlowResult<B>>;
}

const misuse = (message: string) => new OncelyError('invalid_state', `oncely: ${message}`);

/** Builds the flow runner over a flow store; a store without flows is a `capability_missing` error at the first flow. */
export function flowRunner(options: FlowRunnerOptions): FlowRunner {
  const { store, leaseMs, retentionMs, nextToken, clock = systemClock, replay = defaultReplayPolicy } = options;

  const call = <T>(stage: StoreOperation, work: () => Promise<T>): Promise<T> =>
    Promise.resolve()
      .then(work)
      .catch((error: unknown) => {
        throw isOncelyError(error) && !isOncelyError(error, 'storage_error') && !isOncelyError(error, 'corrupt_record')
          ? error
          : toStorageError(store.name, stage, error);
      });

  function flowStore(): FlowStore<unknown> {
    if (!isFlowStore(store)) {
      throw new OncelyError('capability_missing', `oncely: the ${store.name} store does not keep flows; use a store with capabilities.flows`);
    }
    return store;
  }

  function answerExisting<B>(fingerprint: string, record: IdempotencyRecord): FlowResult<B> {
    if (record.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (record.state === 'in_progress') {
      return { kind: 'in_progress', retryAfterMs: Math.max(1, Math.ceil(record.leaseRemainingMs ?? leaseMs)) };
    }
    const { bodyOmitted: _omitted, ...response } = record.response ?? { status: 200 };
    return { kind: 'replayed', state: record.state, response: response as FlowResponse<B> };
  }

  async function drive<B>(
    flows: FlowStore<unknown>,
    scope: Scope,
    fingerprint: string,
    requestText: string,
    callerSignal: AbortSignal | undefined,
    body: FlowBody<never, B>,
    finalFailure?: (error: unknown) => FlowResponse | undefined,
  ): Promise<FlowResult<B>> {
    const token = nextToken();
    const claim = await call('claim', () => store.claim({ scope, fingerprint, token, leaseMs, retentionMs }));
    if (claim.kind === 'existing') return answerExisting(fingerprint, claim.record);
    const opened = await call('openFlow', () => flows.openFlow({ scope, token, request: requestText }));
    if (opened === 'fence_lost') throw new OncelyError('lease_lost', 'oncely: the lease was taken over before the flow opened');
    const lease = new LeaseWatch(clock, callerSignal);
    lease.renew(leaseMs);
    const recorded: FlowState['phases'][number][] = [...opened.phases];
    const state = { position: 0, busy: false, done: false };

    const lost = () => {
      const error = new OncelyError('lease_lost', 'oncely: the lease was taken over; this owner may not advance the flow');
      lease.abort(error);
      return error;
    };

    /** Checks the call and returns the recorded result of this position, if the flow reached it before. */
    function enter(name: string, kind: FlowPhaseKind): { readonly position: number; readonly replay?: { result?: string } } {
      if (state.done) throw misuse(`flow.${kind}("${name}") was called after the flow ended; call phases only inside the flow's body`);
      if (state.busy) throw misuse(`flow.${kind}("${name}") was called while another phase runs; phases run one after another`);
      assertStepName(name);
      const position = state.position;
      const previous = recorded[position];
      if (previous && (previous.name !== name || previous.kind !== kind)) {
        throw misuse(
          `the flow changed: phase ${position} was recorded as ${previous.kind} "${previous.name}", this attempt asks for ${kind} "${name}"; nothing was written`,
        );
      }
      return previous ? { position, replay: previous } : { position };
    }

    async function advance<T>(position: number, name: string, kind: FlowPhaseKind, work: (tx: unknown) => Promise<T>): Promise<T> {
      // The phase's own error reaches the caller unchanged (`flow.advance.rollback`); the store's are StorageErrors.
      let failed: { readonly error: unknown } | undefined;
      let outcome: Awaited<ReturnType<typeof flows.advance<T>>>;
      try {
        outcome = await flows.advance({ scope, token, position, name, kind, leaseMs }, async (tx) => {
          try {
            const value = await work(tx);
            const result = toJsonText(value, `the result of ${kind} phase "${name}"`);
            return { result, value: fromJsonText(result) as T };
          } catch (error) {
            failed = { error };
            throw error;
          }
        });
      } catch (error) {
        throw (failed && error === failed.error) || isOncelyError(error) ? error : toStorageError(store.name, 'advance', error);
      }
      if (outcome.kind === 'fence_lost') throw lost();
      if (outcome.kind === 'out_of_order') throw misuse(`phase ${position} ("${name}") was recorded by another attempt; nothing was written`);
      lease.renew(leaseMs);
      return outcome.value;
    }

    async function phase<T>(name: string, kind: FlowPhaseKind, run: (position: number) => Promise<T>): Promise<T> {
      const entered = enter(name, kind);
      state.position += 1;
      if (entered.replay) return fromJsonText(entered.replay.result) as T;
      state.busy = true;
      try {
        const value = await run(entered.position);
        recorded[entered.position] = { name, kind };
        return value;
      } catch (error) {
        // A phase that did not record leaves the position free, so a caller that catches can go on.
        state.position = entered.position;
        throw error;
      } finally {
        state.busy = false;
      }
    }

    const flow: Flow<never> = {
      request: fromJsonText(opened.request),
      scope,
      fence: claim.fence,
      get signal() {
        return lease.signal;
      },
      atomic: (name, work) => phase(name, 'atomic', (position) => advance(position, name, 'atomic', async (tx) => work(tx as never))),
      remote: (name, remoteCall) =>
        phase(name, 'remote', async (position) => {
          if (lease.signal.aborted) throw lease.signal.reason;
          const value = await remoteCall(await downstreamKey(scope, name), lease.signal);
          return advance(position, name, 'remote', async () => value);
        }),
      downstreamKey: (step) => downstreamKey(scope, step),
    };

    let response: FlowResponse<B>;
    let stored: StoredResponse;
    try {
      response = await body(flow);
      if (state.busy) throw misuse('the flow returned while a phase still ran; await every phase');
      if (state.position < recorded.length) {
        throw misuse(`the flow changed: ${recorded.length} phases were recorded, this attempt ran ${state.position}; nothing was written`);
      }
      stored = toStoredResponse(response);
    } catch (error) {
      state.done = true;
      lease.stop();
      const failure = finalFailure?.(error);
      if (!failure) {
        await handOver(scope, token, recorded.length > 0);
        throw error;
      }
      response = failure as FlowResponse<B>;
      stored = toStoredResponse(failure);
      const saved = await call('complete', () => store.complete({ scope, token, state: 'failed_final', response: stored, retentionMs }));
      if (saved === 'fence_lost') throw error;
      return { kind: 'executed', response, state: 'failed_final' };
    }
    state.done = true;
    lease.stop();
    // A flow past its first recovery point has effects: its outcome is kept, never released.
    const decided = replay(response);
    const outcome = decided === 'release' && recorded.length > 0 ? 'failed_final' : decided;
    if (outcome === 'release') {
      await call('release', () => store.release({ scope, token })).catch(() => undefined);
      return { kind: 'executed', response, state: 'released' };
    }
    const saved = await call('complete', () => store.complete({ scope, token, state: outcome, response: stored, retentionMs }));
    if (saved === 'fence_lost') throw new OncelyError('lease_lost', 'oncely: the lease was taken over before the flow\'s outcome was saved');
    return { kind: 'executed', response, state: outcome };
  }

  /**
   * After a failed attempt: with no recovery point the record is released (a retry starts afresh);
   * past one, the lease is cut to 1 ms so the next retry or a completer resumes at once.
   */
  async function handOver(scope: Scope, token: string, resumable: boolean): Promise<void> {
    try {
      if (resumable) await store.extend({ scope, token, leaseMs: 1 });
      else await store.release({ scope, token });
    } catch {
      // The lease lapses by itself; the caller gets the flow's own error.
    }
  }

  return {
    async run(request, body) {
      const flows = flowStore();
      const scope = toScope(request);
      const requestText = toJsonText(request.request, 'the flow request');
      if (requestText === undefined) throw misuse('a flow needs a JSON request payload');
      const fingerprint = await fingerprintNow(scope.operation, request.request, request.fingerprint ?? options.fingerprint);
      return drive(flows, scope, fingerprint, requestText, request.signal, body);
    },
    async resume(scope, fingerprint, body, finalFailure) {
      // The request is the recorded one: openFlow ignores what a takeover passes.
      return drive(flowStore(), toScope(scope), fingerprint, 'null', undefined, body, finalFailure);
    },
  };
}

/** The response as stored: status checked, body JSON only. */
function toStoredResponse(response: FlowResponse): StoredResponse {
  if (!response || !Number.isInteger(response.status) || response.status < 100 || response.status > 599) {
    throw misuse('a flow must return { status: 100..599, headers?, body? }');
  }
  const body = toJsonText(response.body, "the flow's response body");
  return {
    status: response.status,
    ...(response.headers ? { headers: { ...response.headers } } : {}),
    ...(body === undefined ? {} : { body: JSON.parse(body) }),
    ...(response.resourceId === undefined ? {} : { resourceId: response.resourceId }),
  };
}

/** The flow's signal: aborted when the lease deadline passes or the caller aborts. */
class LeaseWatch {
  readonly #controller = new AbortController();
  #cancel: (() => void) | undefined;
  readonly #callerSignal: AbortSignal | undefined;
  readonly #onCaller = () => this.abort(this.#callerSignal?.reason);

  constructor(
    readonly clock: Clock,
    callerSignal: AbortSignal | undefined,
  ) {
    this.#callerSignal = callerSignal;
    if (callerSignal?.aborted) this.abort(callerSignal.reason);
    else callerSignal?.addEventListener('abort', this.#onCaller, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    this.#cancel?.();
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }

  renew(ms: number): void {
    this.#cancel?.();
    if (this.#controller.signal.aborted) return;
    const lapsed = () => this.abort(new OncelyError('lease_lost', 'oncely: the lease lapsed before the flow finished'));
    if (this.clock.schedule) {
      this.#cancel = this.clock.schedule(ms, lapsed);
    } else {
      const cancel = new AbortController();
      this.clock.sleep(ms, cancel.signal).then(lapsed, () => undefined);
      this.#cancel = () => cancel.abort();
    }
  }

  stop(): void {
    this.#cancel?.();
    this.#callerSignal?.removeEventListener('abort', this.#onCaller);
  }
}

export type { FlowTransactionOf };
