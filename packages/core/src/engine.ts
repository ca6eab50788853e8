import { type Clock, systemClock } from './clock.js';
import { emitSafely, type EngineEvent, type EventListener, type IdempotencyEvent } from './events.js';
import { isOncelyError, OncelyError, toStorageError } from './errors.js';
import { type FingerprintOptions, fingerprintNow } from './fingerprint/fingerprint.js';
import { hashesSynchronously, keyHashNow } from './fingerprint/sha256.js';
import { downstreamKey } from './flow/downstream-key.js';
import type { FlowTransactionOf } from './flow/flow-store.js';
import { type Flow, type FlowBody, type FlowRequest, type FlowResponse, type FlowResult, flowRunner } from './flow/run-flow.js';
import { defaultReplayPolicy, type ReplayPolicy } from './replay-policy.js';
import { hasControlCharacter, type Scope, toScope } from './scope.js';
import type { StoreOperation } from './storage/storage-operation.js';
import {
  type ClaimInput,
  type IdempotencyRecord,
  type IdempotencyStore,
  isTransactionalStore,
  type StoredResponse,
  type TerminalState,
  type TransactionClaim,
  type TransactionOf,
} from './store.js';

/** What a handler returns and what a replay gives back. */
export interface IdempotentResponse<B = unknown> {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: B;
  /** Id of the created resource: kept for reconciliation and for the `reference` strategy. */
  readonly resourceId?: string;
}

/** One attempt at a logical operation. */
export interface IdempotencyRequest {
  /** From the authenticated identity, never from the key. Required. */
  readonly tenant: string;
  readonly principal?: string;
  /** Stable semantic name with a version, e.g. `payments.create.v1`. */
  readonly operation: string;
  /** The client's idempotency key: 1–255 visible ASCII characters. */
  readonly key: string;
  /** The request as it affects the operation; fingerprinted with {@link FingerprintOptions}. */
  readonly request: unknown;
  /** Per-request fingerprint options; replaces the engine's default. */
  readonly fingerprint?: FingerprintOptions;
  /** The caller's cancellation (a closed HTTP connection); forwarded to the handler's signal, read only once the handler reads that. */
  readonly signal?: AbortSignal;
  /** Largest body stored for this request (UTF-8 bytes of its JSON); replaces the engine's `maxStoredBytes`. */
  readonly maxStoredBytes?: number;
}

/** What a handler receives in lease mode. */
export interface HandlerContext {
  /** Aborted when the lease lapses or is lost, or the caller's signal aborts. */
  readonly signal: AbortSignal;
  /** The lease token this execution holds. */
  readonly token: string;
  /** Fencing counter: pass it to downstream systems so they can refuse a stale owner's writes. */
  readonly fence: number;
  readonly scope: Scope;
  readonly keyHash: string;
  /** Renews the lease (default: the engine's `leaseMs`); throws `lease_lost` if it was taken over. */
  extendLease(ms?: number): Promise<void>;
  /** The derived idempotency key of `step` to forward downstream: stable across retries and takeovers (see `downstreamKey`). */
  downstreamKey(step: string): Promise<string>;
}

/** What a handler receives in transactional mode: the open transaction as well. */
export interface TransactionHandlerContext<Tx> extends HandlerContext {
  readonly tx: Tx;
}

/** The outcome of `run` / `runInTransaction`. */
export type RunResult<B = unknown> =
  | {
      readonly kind: 'executed';
      readonly response: IdempotentResponse<B>;
      /** What was recorded: a terminal state, or `released` so a retry may execute again. */
      readonly state: TerminalState | 'released';
    }
  | { readonly kind: 'replayed'; readonly response: IdempotentResponse<B>; readonly state: TerminalState }
  | { readonly kind: 'in_progress'; readonly retryAfterMs: number }
  | { readonly kind: 'mismatch' };

/** Options of {@link createIdempotency}. */
export interface IdempotencyOptions<S extends IdempotencyStore> {
  readonly store: S;
  /** How long an owner holds an in-progress record before another attempt may take over. */
  readonly leaseMs?: number;
  /** How long a record is kept: at least as long as clients may retry. */
  readonly retentionMs?: number;
  /** Which outcomes are stored and replayed; default {@link defaultReplayPolicy}. */
  readonly replay?: ReplayPolicy;
  readonly onEvent?: EventListener<EngineEvent>;
  /** Default fingerprint options for every request. */
  readonly fingerprint?: FingerprintOptions;
  /** Largest JSON body stored for replay, in UTF-8 bytes (default 1 MiB). */
  readonly maxStoredBytes?: number;
  /**
   * A body over `maxStoredBytes`: `omit` stores status and headers only (and says so in an event);
   * `reference` stores the response's `resourceId` and calls `rebuild` on replay.
   */
  readonly oversize?: 'omit' | 'reference';
  /** Rebuilds a replay from the stored status, headers and `resourceId` (`reference` strategy). */
  readonly rebuild?: (stored: StoredResponse & { readonly resourceId: string }) => Promise<IdempotentResponse>;
  readonly clock?: Clock;
}

/** The engine returned by {@link createIdempotency}. */
export interface Idempotency<S extends IdempotencyStore> {
  readonly store: S;
  /** Lease mode: claim (one round trip), run the handler, complete or release (one more). */
  run<B>(
    request: IdempotencyRequest,
    handler: (context: HandlerContext) => Promise<IdempotentResponse<B>>,
  ): Promise<RunResult<B>>;
  /** Transactional mode: claim, handler writes and saved result commit in one transaction. */
  runInTransaction<B>(
    request: IdempotencyRequest,
    handler: (context: TransactionHandlerContext<TransactionOf<S>>) => Promise<IdempotentResponse<B>>,
  ): Promise<RunResult<B>>;
  /**
   * A multi-step operation: atomic local phases and remote calls, each ending at a recovery point; a
   * retry (or a completer) resumes at the last one. Needs a store with `capabilities.flows`.
   */
  flow<B>(request: FlowRequest, body: (flow: Flow<FlowTransactionOf<S>>) => Promise<FlowResponse<B>>): Promise<FlowResult<B>>;
  /** The caller's own record, for lookup and reconciliation endpoints. */
  get(scope: { tenant: string; principal?: string; operation: string; key: string }): Promise<IdempotencyRecord | undefined>;
  /** Deletes up to `limit` expired records. */
  purgeExpired(limit?: number): Promise<number>;
}

const COMPLETE_ATTEMPTS = 3;

/** A validated request with its fingerprint, ready for the store. */
interface Prepared {
  readonly scope: Scope;
  readonly claim: ClaimInput;
  readonly limitBytes: number;
  /** Set once computed: at preparation where hashing is asynchronous, else on first read ({@link keyHashOf}). */
  keyHash?: string;
}

/** The short key hash that events and handlers carry; where hashing is synchronous, computed on first read. */
const keyHashOf = (prepared: Prepared): string => (prepared.keyHash ??= keyHashNow(prepared.scope.key) as string);

/** Starts a timer and returns its cancel function. */
type Schedule = (ms: number, callback: () => void) => () => void;

/** The lease a handler's signal watches: when it ends, and how to time it and say it lapsed. */
interface LeaseTimer {
  readonly now: () => number;
  readonly schedule: Schedule;
  readonly lapsed: () => unknown;
}

/**
 * The handler's abort signal: aborted by the caller's signal or when the lease lapses. An
 * AbortController and a lease timer cost microseconds on every request, so both exist only once
 * the handler reads `signal`; until then a lapse is judged from the deadline.
 */
class Lifeline {
  #controller: AbortController | undefined;
  #abortedWith: { readonly reason: unknown } | undefined;
  #deadline = Number.POSITIVE_INFINITY;
  #cancelTimer: (() => void) | undefined;
  /** Where the caller's signal is read, once, when the handler first reads its own: an HTTP binding builds it only then. */
  readonly #caller: { readonly signal?: AbortSignal | undefined };
  #callerSignal: AbortSignal | undefined;
  #stopped = false;
  readonly #onCallerAbort = () => this.abort(this.#callerSignal?.reason);
  readonly #lease: LeaseTimer | undefined;

  /** Without `lease` (transactional mode) only the caller's abort reaches the signal. */
  constructor(caller: { readonly signal?: AbortSignal | undefined }, lease?: LeaseTimer) {
    this.#caller = caller;
    this.#lease = lease;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      // The caller's abort matters only to a handler that watches its signal, so it is linked only now.
      const callerSignal = this.#caller.signal;
      if (callerSignal?.aborted) this.abort(callerSignal.reason);
      else if (callerSignal && !this.#stopped) {
        this.#callerSignal = callerSignal;
        callerSignal.addEventListener('abort', this.#onCallerAbort, { once: true });
      }
      this.#checkLapse();
      if (this.#abortedWith) this.#controller.abort(this.#abortedWith.reason);
      else this.#startTimer();
    }
    return this.#controller.signal;
  }

  /** Aborts once, with the first reason. */
  abort(reason: unknown): void {
    if (this.#abortedWith) return;
    this.#abortedWith = { reason };
    this.#cancelTimer?.();
    this.#controller?.abort(reason);
  }

  /** The lease now runs `ms` from now; a lapse that came first still counts. */
  renew(ms: number): void {
    if (!this.#lease) return;
    this.#checkLapse();
    this.#deadline = this.#lease.now() + ms;
    if (this.#controller) this.#startTimer();
  }

  /** The handler finished: no timer, no link to the caller's signal. */
  stop(): void {
    this.#stopped = true;
    this.#cancelTimer?.();
    this.#deadline = Number.POSITIVE_INFINITY;
    this.#callerSignal?.removeEventListener('abort', this.#onCallerAbort);
  }

  #checkLapse(): void {
    if (this.#lease && this.#lease.now() >= this.#deadline) this.abort(this.#lease.lapsed());
  }

  #startTimer(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    if (!this.#lease || this.#abortedWith || this.#deadline === Number.POSITIVE_INFINITY) return;
    // A timer may fire a little before the clock says the deadline passed: then it waits again.
    const remaining = Math.max(1, this.#deadline - this.#lease.now());
    this.#cancelTimer = this.#lease.schedule(remaining, () => {
      this.#checkLapse();
      this.#startTimer();
    });
  }
}

/**
 * What every handler receives. `signal` and `keyHash` are getters, so the AbortController, the lease
 * timer and the key's hash are built only for handlers that read them. They are own, enumerable
 * properties, defined from shared descriptors, so destructuring and `{ ...context }` see them like
 * the rest; a class with two `defineProperty` calls builds in a fraction of the time an object
 * literal with getters takes.
 */
class ContextBase implements HandlerContext {
  static readonly #signal: PropertyDescriptor = {
    enumerable: true,
    get(this: ContextBase) {
      return this.#lifeline.signal;
    },
  };
  static readonly #keyHash: PropertyDescriptor = {
    enumerable: true,
    get(this: ContextBase) {
      return keyHashOf(this.#prepared);
    },
  };
  readonly #lifeline: Lifeline;
  readonly #prepared: Prepared;
  readonly token: string;
  readonly scope: Scope;
  declare readonly signal: AbortSignal;
  declare readonly keyHash: string;

  constructor(
    prepared: Prepared,
    lifeline: Lifeline,
    readonly fence: number,
    readonly extendLease: (ms?: number) => Promise<void>,
  ) {
    this.#prepared = prepared;
    this.#lifeline = lifeline;
    this.token = prepared.claim.token;
    this.scope = prepared.scope;
    Object.defineProperty(this, 'signal', ContextBase.#signal);
    Object.defineProperty(this, 'keyHash', ContextBase.#keyHash);
  }

  downstreamKey(step: string): Promise<string> {
    return downstreamKey(this.scope, step);
  }
}

const encoder = new TextEncoder();
/** Any UTF-16 unit outside ASCII. */
const NON_ASCII = /[\u0080-\uffff]/;

/** UTF-8 size of `text`. For ASCII, the usual JSON body, that is its length: no need to encode a copy. */
function utf8Length(text: string): number {
  return NON_ASCII.test(text) ? encoder.encode(text).length : text.length;
}

/**
 * Lease tokens: a UUID drawn at the engine's first claim, then a counter. Each claim still gets a
 * token no other claim has (the counter never repeats within an engine, the UUID across engines) at
 * a fraction of a fresh UUID's cost, which every request pays. A token proves ownership to the store:
 * it must be unique, not secret.
 */
function leaseTokens(): () => string {
  let prefix: string | undefined;
  let count = 0;
  return () => {
    prefix ??= `${globalThis.crypto.randomUUID()}.`;
    return prefix + (count++).toString(36);
  };
}

/** A shared abort reason: aborting without one makes the platform build a DOMException with a stack. */
const TIMER_CANCELLED = Object.freeze({ reason: 'oncely: timer cancelled' });

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new OncelyError('invalid_option', `oncely: ${name} must be a positive integer of milliseconds, got ${value}`);
  }
  return value;
}

/**
 * Creates the idempotency engine over a store. All validation happens here and before any store
 * call: a bad key, scope or payload throws a coded {@link OncelyError} and touches nothing.
 */
export function createIdempotency<S extends IdempotencyStore>(options: IdempotencyOptions<S>): Idempotency<S> {
  const { store, onEvent, clock = systemClock, replay = defaultReplayPolicy } = options;
  if (!store || typeof store.claim !== 'function') {
    throw new OncelyError('invalid_option', 'oncely: createIdempotency needs a store');
  }
  const leaseMs = positiveInteger('leaseMs', options.leaseMs ?? 30_000);
  const retentionMs = positiveInteger('retentionMs', options.retentionMs ?? 86_400_000);
  const maxStoredBytes = positiveInteger('maxStoredBytes', options.maxStoredBytes ?? 1_048_576);
  const oversize = options.oversize ?? 'omit';
  if (retentionMs < leaseMs) {
    throw new OncelyError('invalid_option', 'oncely: retentionMs must be at least leaseMs');
  }
  if (oversize === 'reference' && !options.rebuild) {
    throw new OncelyError('invalid_option', 'oncely: the reference strategy needs a rebuild function');
  }

  const emit = (event: EngineEvent) => emitSafely(onEvent, event);
  const nextToken = leaseTokens();

  /** Validates and fingerprints a request; synchronous on Node, where digests are plain strings. */
  function prepare(request: IdempotencyRequest): Prepared | Promise<Prepared> {
    const scope = toScope(request);
    const limitBytes = request.maxStoredBytes ?? maxStoredBytes;
    if (!Number.isInteger(limitBytes) || limitBytes < 0) {
      throw new OncelyError('invalid_option', `oncely: maxStoredBytes must be a non-negative integer, got ${limitBytes}`);
    }
    const print = fingerprintNow(scope.operation, request.request, request.fingerprint ?? options.fingerprint);
    const build = (fingerprint: string, keyHash?: string): Prepared => ({
      scope,
      claim: { scope, fingerprint, token: nextToken(), leaseMs, retentionMs },
      limitBytes,
      keyHash,
    });
    if (typeof print === 'string' && hashesSynchronously) return build(print);
    return Promise.all([print, keyHashNow(scope.key)]).then((digests) => build(...digests));
  }

  type EventBody = IdempotencyEvent extends infer E ? (E extends unknown ? Omit<E, 'at' | 'tenant' | 'operation' | 'keyHash'> : never) : never;
  const report = (prepared: Prepared, body: EventBody) => {
    if (!onEvent) return;
    const { tenant, operation } = prepared.scope;
    emit({ tenant, operation, keyHash: keyHashOf(prepared), at: clock.now(), ...body } as IdempotencyEvent);
  };

  /** What a found record means for this request; synchronous unless a replay must be rebuilt. */
  function answerExisting<B>(prepared: Prepared, record: IdempotencyRecord): RunResult<B> | Promise<RunResult<B>> {
    if (record.fingerprint !== prepared.claim.fingerprint) {
      report(prepared, { type: 'mismatch' });
      return { kind: 'mismatch' };
    }
    if (record.state === 'in_progress') {
      const retryAfterMs = Math.max(1, Math.ceil(record.leaseRemainingMs ?? leaseMs));
      report(prepared, { type: 'in_progress', retryAfterMs });
      return { kind: 'in_progress', retryAfterMs };
    }
    report(prepared, { type: 'replayed', state: record.state });
    const { state } = record;
    const stored = record.response;
    if (stored?.bodyOmitted && stored.resourceId !== undefined && options.rebuild) {
      return options
        .rebuild({ ...stored, resourceId: stored.resourceId })
        .then((response) => ({ kind: 'replayed', state, response: response as IdempotentResponse<B> }));
    }
    return { kind: 'replayed', state, response: replayResponse(stored) as IdempotentResponse<B> };
  }

  /** A stored response as the caller gets it back, without the storage-only flag. */
  function replayResponse(stored: StoredResponse | undefined): IdempotentResponse {
    if (!stored) return { status: 200 };
    const { bodyOmitted: _omitted, ...response } = stored;
    return response;
  }

  /** Shapes a response for storage, applying the size limit. */
  function toStored(prepared: Prepared, response: IdempotentResponse): StoredResponse {
    let json: string | undefined;
    try {
      json = response.body === undefined ? undefined : JSON.stringify(response.body);
    } catch {
      json = undefined;
    }
    const serializable = response.body === undefined || json !== undefined;
    const bytes = json === undefined ? 0 : utf8Length(json);
    const stored = stripBody(response);
    if (serializable && bytes <= prepared.limitBytes) {
      // Parsed back from the JSON: the stored copy is a snapshot, with what JSON keeps and nothing else.
      if (json !== undefined) stored.body = JSON.parse(json);
      return stored;
    }
    const strategy = oversize === 'reference' && response.resourceId !== undefined ? 'reference' : 'omit';
    report(prepared, { type: 'response_not_stored', bytes, limitBytes: prepared.limitBytes, strategy });
    stored.bodyOmitted = true;
    return stored;
  }

  /** Status, headers and resourceId of a response, in a new object the caller may add to. */
  function stripBody(response: IdempotentResponse): { -readonly [K in keyof StoredResponse]: StoredResponse[K] } {
    const stored: { -readonly [K in keyof StoredResponse]: StoredResponse[K] } = { status: response.status };
    if (response.headers) stored.headers = { ...response.headers };
    if (response.resourceId !== undefined) stored.resourceId = response.resourceId;
    return stored;
  }

  function checkResponse(response: IdempotentResponse): void {
    if (!response || !Number.isInteger(response.status) || response.status < 100 || response.status > 599) {
      throw new OncelyError('invalid_option', 'oncely: the handler must return { status: 100..599, headers?, body? }');
    }
    // A NUL or a lone surrogate would fail (PostgreSQL text) or be altered (UTF-8) by some store after the effect ran.
    const { resourceId } = response;
    if (resourceId !== undefined && (typeof resourceId !== 'string' || hasControlCharacter(resourceId))) {
      throw new OncelyError(
        'invalid_option',
        'oncely: the handler returned a resourceId that is not a string without control characters or lone surrogates',
      );
    }
  }

  /** A store call whose every failure leaves as a reported StorageError (a `.then`, not an async frame: it is on every request). */
  function storeCall<T>(prepared: Prepared, stage: StoreOperation, call: () => Promise<T>): Promise<T> {
    const fail = (error: unknown): never => {
      const wrapped = toStorageError(store.name, stage, error);
      report(prepared, { type: 'storage_error', stage, error: wrapped });
      throw wrapped;
    };
    try {
      // A store written in plain JavaScript may answer with a value instead of a promise.
      return Promise.resolve(call()).then(undefined, fail);
    } catch (error) {
      return Promise.reject(error).then(undefined, fail);
    }
  }

  async function complete(
    prepared: Prepared,
    fence: number,
    state: TerminalState,
    response: StoredResponse,
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await storeCall(prepared, 'complete', () =>
          store.complete({ scope: prepared.scope, token: prepared.claim.token, state, response, retentionMs }),
        );
        if (result === 'ok' || (attempt > 1 && (await landedEarlier(prepared, fence, state)))) return;
        report(prepared, { type: 'fence_lost', stage: 'complete' });
        throw new OncelyError(
          'lease_lost',
          'oncely: the lease was taken over before the outcome was saved; the result was not recorded',
        );
      } catch (error) {
        // A storage blip after the side effect: retry briefly, since an unsaved outcome may run twice.
        if (!isOncelyError(error, 'storage_error') || attempt >= COMPLETE_ATTEMPTS) throw error;
        await clock.sleep(25 * attempt);
      }
    }
  }

  /**
   * After a failed attempt, `fence_lost` may mean the earlier write landed and only its reply was
   * lost: the record is then terminal with our fence (a takeover would have raised it).
   */
  async function landedEarlier(prepared: Prepared, fence: number, state: TerminalState): Promise<boolean> {
    const record = await storeCall(prepared, 'get', () => store.get(prepared.scope));
    return record?.state === state && record.fence === fence && record.fingerprint === prepared.claim.fingerprint;
  }

  async function release(prepared: Prepared): Promise<void> {
    try {
      const result = await storeCall(prepared, 'release', () =>
        store.release({ scope: prepared.scope, token: prepared.claim.token }),
      );
      if (result === 'fence_lost') report(prepared, { type: 'fence_lost', stage: 'release' });
    } catch {
      // The lease will lapse by itself; the caller gets the original outcome.
    }
  }

  /** A timer through the clock: `schedule` where it has one, else a cancellable `sleep`. */
  const schedule: Schedule = clock.schedule
    ? (ms, callback) => clock.schedule!(ms, callback)
    : (ms, callback) => {
        const cancel = new AbortController();
        clock.sleep(ms, cancel.signal).then(callback, () => undefined);
        return () => cancel.abort(TIMER_CANCELLED);
      };

  const leaseTimer: LeaseTimer = {
    now: () => clock.now(),
    schedule,
    lapsed: () => new OncelyError('lease_lost', 'oncely: the lease lapsed before the handler finished'),
  };

  /** The handler's context in lease mode: its signal aborts when the lease lapses, and extendLease renews it. */
  function leaseContext(prepared: Prepared, lifeline: Lifeline, fence: number): HandlerContext {
    return new ContextBase(
      prepared,
      lifeline,
      fence,
      async (ms = leaseMs) => {
        positiveInteger('extendLease ms', ms);
        const result = await storeCall(prepared, 'extend', () =>
          store.extend({ scope: prepared.scope, token: prepared.claim.token, leaseMs: ms }),
        );
        if (result === 'fence_lost') {
          report(prepared, { type: 'fence_lost', stage: 'extend' });
          const lost = new OncelyError('lease_lost', 'oncely: the lease was taken over by another attempt');
          lifeline.abort(lost);
          throw lost;
        }
        lifeline.renew(ms);
      },
    );
  }

  async function run<B>(
    request: IdempotencyRequest,
    handler: (context: HandlerContext) => Promise<IdempotentResponse<B>>,
  ): Promise<RunResult<B>> {
    const pending = prepare(request);
    const prepared = pending instanceof Promise ? await pending : pending;
    const claim = await storeCall(prepared, 'claim', () => store.claim(prepared.claim));
    if (claim.kind === 'existing') return answerExisting(prepared, claim.record);

    report(prepared, { type: 'claimed', mode: 'lease', fence: claim.fence, takeover: claim.takeover });
    // Only the `completed` event reads the start time.
    const startedAt = onEvent ? clock.now() : 0;
    const lifeline = new Lifeline(request, leaseTimer);
    lifeline.renew(leaseMs);
    let response: IdempotentResponse<B>;
    try {
      response = await handler(leaseContext(prepared, lifeline, claim.fence));
      checkResponse(response);
    } catch (error) {
      lifeline.stop();
      await release(prepared);
      report(prepared, { type: 'released', reason: 'error' });
      throw error;
    }
    lifeline.stop();
    const decision = replay(response);
    if (decision === 'release') {
      await release(prepared);
      report(prepared, { type: 'released', reason: 'policy', status: response.status });
      return { kind: 'executed', response, state: 'released' };
    }
    await complete(prepared, claim.fence, decision, toStored(prepared, response));
    report(prepared, { type: 'completed', state: decision, status: response.status, durationMs: clock.now() - startedAt });
    return { kind: 'executed', response, state: decision };
  }

  async function runInTransaction<B>(
    request: IdempotencyRequest,
    handler: (context: TransactionHandlerContext<TransactionOf<S>>) => Promise<IdempotentResponse<B>>,
  ): Promise<RunResult<B>> {
    if (!isTransactionalStore(store)) {
      throw new OncelyError(
        'capability_missing',
        `oncely: the ${store.name} store does not support transactions; use run() (lease mode)`,
      );
    }
    const prepared = await prepare(request);
    const startedAt = clock.now();
    let executed = false;
    const work = async (claim: TransactionClaim, tx: unknown) => {
      if (claim.kind === 'busy') {
        const retryAfterMs = Math.min(leaseMs, 1_000);
        report(prepared, { type: 'in_progress', retryAfterMs });
        return { action: 'rollback' as const, value: { kind: 'in_progress', retryAfterMs } as RunResult<B> };
      }
      if (claim.kind === 'existing') {
        return { action: 'rollback' as const, value: await answerExisting<B>(prepared, claim.record) };
      }
      report(prepared, { type: 'claimed', mode: 'transaction', fence: claim.fence, takeover: claim.takeover });
      executed = true;
      const lifeline = new Lifeline(request);
      let response: IdempotentResponse<B>;
      try {
        // The transaction holds the row lock for as long as it is open: nothing to renew.
        const extendLease = async () => undefined;
        const context = Object.assign(new ContextBase(prepared, lifeline, claim.fence, extendLease), { tx: tx as TransactionOf<S> });
        response = await handler(context);
        checkResponse(response);
      } finally {
        lifeline.stop();
      }
      const decision = replay(response);
      if (decision === 'release') {
        return { action: 'rollback' as const, value: { kind: 'executed', response, state: 'released' } as RunResult<B> };
      }
      return {
        action: 'commit' as const,
        state: decision,
        response: toStored(prepared, response),
        retentionMs,
        value: { kind: 'executed', response, state: decision } as RunResult<B>,
      };
    };
    let result: RunResult<B>;
    try {
      result = await store.transaction(prepared.claim, work);
    } catch (error) {
      if (executed) report(prepared, { type: 'released', reason: 'error' });
      // The handler's own errors pass through untouched; the rollback already undid the claim.
      throw executed || isOncelyError(error) ? error : toStorageError(store.name, 'transaction', error);
    }
    if (result.kind === 'executed') {
      if (result.state === 'released') {
        report(prepared, { type: 'released', reason: 'policy', status: result.response.status });
      } else {
        report(prepared, {
          type: 'completed',
          state: result.state,
          status: result.response.status,
          durationMs: clock.now() - startedAt,
        });
      }
    }
    return result;
  }

  const flows = flowRunner({ store, leaseMs, retentionMs, replay, fingerprint: options.fingerprint, clock, nextToken });

  return {
    store,
    run,
    runInTransaction,
    flow: (request, body) => flows.run(request, body as unknown as FlowBody<never, never>),
    async get(input) {
      const scope = toScope(input);
      try {
        return await store.get(scope);
      } catch (error) {
        throw toStorageError(store.name, 'get', error);
      }
    },
    async purgeExpired(limit = 1_000) {
      positiveInteger('purgeExpired limit', limit);
      let count: number;
      try {
        count = await store.purgeExpired(limit);
      } catch (error) {
        throw toStorageError(store.name, 'purgeExpired', error);
      }
      emit({ type: 'purged', at: clock.now(), count });
      return count;
    },
  };
}
