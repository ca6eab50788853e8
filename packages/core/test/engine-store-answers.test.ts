import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClaimResult, TransactionalStore, TransactionClaim } from '../src/adapter.js';
import {
  createIdempotency,
  type EngineEvent,
  type IdempotencyStore,
  isStorageError,
  type MemoryStore,
  memoryStore,
  StorageError,
} from '../src/index.js';

const base = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k_answers', request: { amount: '10.00' } };

/** The real memory store, with one method's answer rewritten on the way back (a store that answers outside the contract). */
function rewriting<M extends 'claim' | 'complete' | 'release' | 'extend'>(
  method: M,
  rewrite: (answer: Awaited<ReturnType<MemoryStore[M]>>) => unknown,
): IdempotencyStore {
  const inner = memoryStore();
  return new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== method) return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: unknown[]) => rewrite(await (value as (...a: unknown[]) => Promise<never>).apply(target, args));
    },
  });
}

/**
 * The memory store with a transaction around its claim (claim, work, then complete or release), the
 * claim rewritten on its way to the work: a transactional store that answers outside the contract.
 */
function transactional(rewrite: (claim: ClaimResult) => unknown, answer?: (value: unknown) => unknown): TransactionalStore<{ id: string }> {
  const inner = memoryStore();
  return {
    ...inner,
    name: 'memory-tx',
    capabilities: { ...inner.capabilities, transactions: true },
    claim: (input) => inner.claim(input),
    complete: (input) => inner.complete(input),
    release: (input) => inner.release(input),
    extend: (input) => inner.extend(input),
    get: (scope) => inner.get(scope),
    purgeExpired: (limit) => inner.purgeExpired(limit),
    close: () => inner.close(),
    async transaction(input, work) {
      const claim = await inner.claim(input);
      let decision: Awaited<ReturnType<typeof work>>;
      try {
        decision = await work(rewrite(claim) as TransactionClaim, { id: 'tx' });
      } catch (error) {
        if (claim.kind === 'claimed') await inner.release({ scope: input.scope, token: input.token });
        throw error;
      }
      if (claim.kind === 'claimed') {
        if (decision.action === 'commit') {
          await inner.complete({ scope: input.scope, token: input.token, state: decision.state, response: decision.response, retentionMs: decision.retentionMs });
        } else await inner.release({ scope: input.scope, token: input.token });
      }
      return (answer ? answer(decision.value) : decision.value) as never;
    },
  };
}

/** Runs one request and says how it ended, how often the handler ran, and the storage_error events. */
async function attempt(store: IdempotencyStore, mode: 'lease' | 'transaction' = 'lease') {
  const events: EngineEvent[] = [];
  const engine = createIdempotency({ store, onEvent: (event) => events.push(event) });
  let handlerCalls = 0;
  const handler = async () => {
    handlerCalls += 1;
    return { status: 201, body: { id: 'pay_1' } };
  };
  const run = mode === 'lease' ? engine.run(base, handler) : engine.runInTransaction(base as never, handler);
  const outcome: { readonly result?: unknown; readonly error?: unknown } = await run.then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  return { outcome, handlerCalls, storageErrors: events.filter((event) => event.type === 'storage_error') };
}

/** What a completed key's claim answers: an `existing` answer with a real terminal record. */
async function completedRecordClaim(): Promise<ClaimResult & { kind: 'existing' }> {
  const store = memoryStore();
  await createIdempotency({ store }).run(base, async () => ({ status: 201, body: { id: 'pay_1' } }));
  const engine = createIdempotency({ store });
  const claim = await store.claim({ scope: (await engine.get(base))!.scope, fingerprint: 'f', token: 't', leaseMs: 1_000, retentionMs: 1_000 });
  if (claim.kind !== 'existing') throw new Error('expected an existing record');
  return claim;
}

const expectCorrupt = (outcome: { error?: unknown; result?: unknown }, operation: string) => {
  expect(outcome.result).toBeUndefined();
  expect(outcome.error).toBeInstanceOf(StorageError);
  expect(outcome.error).toMatchObject({ code: 'corrupt_record', operation, adapter: expect.any(String) });
};

describe('a claim answer outside the contract is corrupt_record, and no handler runs', () => {
  const record = (claim: ClaimResult) => (claim.kind === 'existing' ? claim.record : { fingerprint: 'f', state: 'succeeded', fence: 1 });
  it.each<[string, (claim: ClaimResult) => unknown]>([
    ["{ kind: 'weird' }", () => ({ kind: 'weird' })],
    ['undefined', () => undefined],
    ['null', () => null],
    ['a string', () => 'claimed'],
    ['a number', () => 1],
    ['an array', (claim) => [claim]],
    ['claimed without a fence', () => ({ kind: 'claimed', takeover: false })],
    ['claimed with fence 0', () => ({ kind: 'claimed', fence: 0, takeover: false })],
    ['claimed with a fractional fence', () => ({ kind: 'claimed', fence: 1.5, takeover: false })],
    ['claimed with a string fence', () => ({ kind: 'claimed', fence: '1', takeover: false })],
    ['claimed without a takeover flag', () => ({ kind: 'claimed', fence: 1 })],
    ['existing without a record', () => ({ kind: 'existing' })],
    ['existing with a null record', () => ({ kind: 'existing', record: null })],
    ['existing with a record of an unknown state', (claim) => ({ kind: 'existing', record: { ...record(claim), state: 'done' } })],
    ['existing with a record without a fingerprint', (claim) => ({ kind: 'existing', record: { ...record(claim), fingerprint: undefined } })],
    ['existing with a record without a fence', (claim) => ({ kind: 'existing', record: { ...record(claim), fence: undefined } })],
    ['existing with a terminal record whose response has no status', (claim) => ({ kind: 'existing', record: { ...record(claim), response: { body: 1 } } })],
    ['existing, in progress, with a negative lease', (claim) => ({ kind: 'existing', record: { ...record(claim), state: 'in_progress', leaseRemainingMs: -5 } })],
    ['busy, outside a transaction', () => ({ kind: 'busy' })],
  ])('lease mode: %s', async (_name, rewrite) => {
    const completed = await completedRecordClaim();
    // A first claim of the key answers `claimed`; the rewrite sees a real record where one is needed.
    const { outcome, handlerCalls, storageErrors } = await attempt(rewriting('claim', (claim) => rewrite(claim.kind === 'existing' ? claim : completed)));
    expectCorrupt(outcome, 'claim');
    expect(handlerCalls).toBe(0);
    expect(storageErrors).toHaveLength(1);
  });

  it.each<[string, (claim: ClaimResult) => unknown]>([
    ["{ kind: 'weird' }", () => ({ kind: 'weird' })],
    ['undefined', () => undefined],
    ['claimed without a fence', () => ({ kind: 'claimed', takeover: false })],
    ['existing without a record', () => ({ kind: 'existing' })],
    ['existing with a record of an unknown state', () => ({ kind: 'existing', record: { fingerprint: 'f', state: 'done', fence: 1 } })],
  ])('transaction mode: %s', async (_name, rewrite) => {
    const { outcome, handlerCalls } = await attempt(transactional(rewrite), 'transaction');
    expectCorrupt(outcome, 'claim');
    expect(handlerCalls).toBe(0);
  });

  it('transaction mode: busy is a contract shape (in_progress), and a good claim runs the handler once', async () => {
    const busy = await attempt(transactional(() => ({ kind: 'busy' })), 'transaction');
    expect(busy.outcome).toEqual({ result: { kind: 'in_progress', retryAfterMs: 1_000 } });
    const good = await attempt(transactional((claim) => claim), 'transaction');
    expect(good.outcome).toMatchObject({ result: { kind: 'executed', state: 'succeeded' } });
    expect(good.handlerCalls).toBe(1);
  });

  it('transaction mode: a transaction that answers something its work did not decide is corrupt_record', async () => {
    const { outcome, handlerCalls } = await attempt(
      transactional(
        (claim) => claim,
        () => ({ kind: 'weird' }),
      ),
      'transaction',
    );
    expectCorrupt(outcome, 'transaction');
    expect(handlerCalls).toBe(1);
  });

  it('a real record the store reports is accepted: the same rewrite that passes the answer through replays', async () => {
    const store = rewriting('claim', (claim) => claim);
    const engine = createIdempotency({ store });
    await engine.run(base, async () => ({ status: 201, body: { id: 'pay_1' } }));
    expect(await engine.run(base, async () => ({ status: 500 }))).toMatchObject({ kind: 'replayed', state: 'succeeded' });
  });
});

/** The contract's claim shapes, written out independently of the engine's check. */
const isContractClaim = (answer: unknown): boolean => {
  if (typeof answer !== 'object' || answer === null) return false;
  const a = answer as Record<string, unknown>;
  if (a.kind === 'claimed') return Number.isSafeInteger(a.fence) && (a.fence as number) >= 1 && typeof a.takeover === 'boolean';
  if (a.kind !== 'existing' || typeof a.record !== 'object' || a.record === null) return false;
  const r = a.record as Record<string, unknown>;
  const fenceOk = Number.isSafeInteger(r.fence) && (r.fence as number) >= 1;
  if (typeof r.fingerprint !== 'string' || !fenceOk) return false;
  if (r.state === 'in_progress') {
    return r.leaseRemainingMs === undefined || (typeof r.leaseRemainingMs === 'number' && Number.isFinite(r.leaseRemainingMs) && r.leaseRemainingMs >= 0);
  }
  if (r.state !== 'succeeded' && r.state !== 'failed_final') return false;
  const res = r.response as Record<string, unknown> | undefined;
  if (res === undefined) return true;
  if (typeof res !== 'object' || res === null) return false;
  const statusOk = Number.isInteger(res.status) && (res.status as number) >= 100 && (res.status as number) <= 599;
  const headersOk = res.headers === undefined || (typeof res.headers === 'object' && res.headers !== null);
  return statusOk && headersOk && (res.resourceId === undefined || typeof res.resourceId === 'string') && (res.bodyOmitted === undefined || typeof res.bodyOmitted === 'boolean');
};

/** Contract shapes: a claim, or an existing record in any state. */
const validRecord = fc.record({
  fingerprint: fc.string(),
  state: fc.constantFrom('in_progress', 'succeeded', 'failed_final'),
  fence: fc.integer({ min: 1, max: 1_000 }),
  response: fc.record({ status: fc.integer({ min: 100, max: 599 }), body: fc.jsonValue() }),
});
const validClaims = fc.oneof(
  fc.record({ kind: fc.constant('claimed'), fence: fc.integer({ min: 1, max: 1_000 }), takeover: fc.boolean() }),
  fc.record({ kind: fc.constant('existing'), record: validRecord }),
);

/** A contract shape with one member replaced by anything (or removed): the near misses a buggy store answers. */
const oneMemberOff = fc
  .tuple(validClaims, fc.constantFrom('kind', 'fence', 'takeover', 'record', 'record.fingerprint', 'record.state', 'record.fence', 'record.response', 'record.response.status'), fc.oneof(fc.constant(undefined), fc.anything()))
  .map(([claim, path, value]) => {
    const copy = structuredClone(claim) as Record<string, unknown>;
    const [head, ...rest] = path.split('.');
    let target: Record<string, unknown> | undefined = copy;
    for (const key of [head!, ...rest].slice(0, -1)) target = target?.[key] as Record<string, unknown> | undefined;
    if (target && typeof target === 'object') target[path.split('.').at(-1)!] = value;
    return copy;
  });

/** Anything at all, and the near misses of the contract's shapes. */
const claimAnswers = fc.oneof(fc.anything(), oneMemberOff, validClaims);

describe('property: any claim answer that is not a contract shape is corrupt_record, and no handler runs', () => {
  it('lease mode, arbitrary answers and near misses', async () => {
    await fc.assert(
      fc.asyncProperty(claimAnswers.filter((answer) => !isContractClaim(answer)), async (answer) => {
        const { outcome, handlerCalls } = await attempt(rewriting('claim', () => answer));
        expect(isStorageError(outcome.error) && outcome.error.code === 'corrupt_record').toBe(true);
        expect(handlerCalls).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('and every contract shape among them is accepted (never corrupt_record)', async () => {
    await fc.assert(
      fc.asyncProperty(claimAnswers.filter(isContractClaim), async (answer) => {
        const { outcome } = await attempt(rewriting('claim', () => answer));
        expect(isStorageError(outcome.error) && outcome.error.code === 'corrupt_record').toBe(false);
      }),
      { numRuns: 100 },
    );
  });
});

describe('a compare-and-set answer other than ok or fence_lost is corrupt_record', () => {
  it.each([['weird'], [undefined], [true], [{ ok: true }]])('complete answering %j: corrupt_record, never taken for a lost lease', async (answer) => {
    const { outcome, handlerCalls } = await attempt(rewriting('complete', () => answer));
    expectCorrupt(outcome, 'complete');
    expect(handlerCalls).toBe(1);
  });

  it('extend answering undefined: extendLease throws corrupt_record and the signal aborts with it', async () => {
    const engine = createIdempotency({ store: rewriting('extend', () => undefined) });
    let aborted: unknown;
    const outcome = await engine
      .run(base, async (context) => {
        const signal = context.signal;
        await context.extendLease(5_000).catch((error: unknown) => {
          aborted = signal.reason;
          throw error;
        });
        return { status: 201 };
      })
      .catch((error: unknown) => error);
    expect(outcome).toMatchObject({ code: 'corrupt_record', operation: 'extend' });
    expect(aborted).toBe(outcome);
  });

  it('release answering 42 after a handler error: the handler error still reaches the caller, the refusal is reported', async () => {
    const events: EngineEvent[] = [];
    const engine = createIdempotency({ store: rewriting('release', () => 42), onEvent: (event) => events.push(event) });
    const boom = new Error('boom');
    expect(await engine.run(base, async () => Promise.reject(boom)).catch((error: unknown) => error)).toBe(boom);
    expect(events.find((event) => event.type === 'storage_error')).toMatchObject({ stage: 'release', error: { code: 'corrupt_record' } });
  });
});

describe('a transaction that fails after its work decided is a StorageError, whatever the store threw', () => {
  /** A transactional store whose COMMIT (or ROLLBACK) fails with a raw driver error after the work returned. */
  function failingEnd(raw: unknown): TransactionalStore<{ id: string }> {
    const store = transactional((claim) => claim);
    return {
      ...store,
      async transaction(input, work) {
        await store.transaction(input, work);
        throw raw;
      },
    };
  }

  it.each<[string, unknown]>([
    ['an Error', new Error('connection terminated during COMMIT')],
    ['a string', 'socket hang up'],
  ])('a failed commit (%s) after the handler ran is storage_error at commit, with the cause kept', async (_label, raw) => {
    const { outcome, handlerCalls, storageErrors } = await attempt(failingEnd(raw), 'transaction');
    expect(handlerCalls).toBe(1);
    expect(outcome.error).toBeInstanceOf(StorageError);
    expect(outcome.error).toMatchObject({ code: 'storage_error', operation: 'commit', adapter: 'memory-tx' });
    expect((outcome.error as { cause?: unknown }).cause).toBe(raw);
    expect(storageErrors).toMatchObject([{ stage: 'commit', error: outcome.error }]);
  });

  it("the handler's own error still passes through untouched", async () => {
    const boom = new Error('handler failed');
    const engine = createIdempotency({ store: failingEnd(new Error('never reached')) });
    expect(await engine.runInTransaction(base as never, async () => Promise.reject(boom)).catch((error: unknown) => error)).toBe(boom);
  });

  it('a failed rollback after a replay decision is storage_error too', async () => {
    const store = failingEnd(new Error('ROLLBACK failed'));
    const engine = createIdempotency({ store: transactional((claim) => claim) });
    await engine.runInTransaction(base as never, async () => ({ status: 201 }));
    // The same key again: the work decides to replay (rollback), then the store's end fails.
    const replaying: TransactionalStore<{ id: string }> = {
      ...store,
      async transaction(input, work) {
        const existing = await engine.store.claim(input);
        await work(existing as TransactionClaim, { id: 'tx' });
        throw new Error('ROLLBACK failed');
      },
    };
    const outcome = await createIdempotency({ store: replaying }).runInTransaction(base as never, async () => ({ status: 201 })).catch((error: unknown) => error);
    expect(outcome).toMatchObject({ code: 'storage_error', operation: 'commit' });
  });
});

describe('runInTransaction with { tx }: joining the caller transaction', () => {
  it('on a transactional store without join is capability_missing, and nothing is claimed', async () => {
    let ran = false;
    const store = transactional((claim) => claim);
    const outcome = await createIdempotency({ store })
      .runInTransaction(base, async () => {
        ran = true;
        return { status: 201 };
      }, { tx: { id: 'caller' } })
      .catch((error: unknown) => error);
    expect(outcome).toMatchObject({ code: 'capability_missing' });
    expect(ran).toBe(false);
    expect(await store.get({ ...base })).toBeUndefined();
  });

  it.each([null, undefined])('a tx of %s is invalid_option before the store is called', async (tx) => {
    const joined: string[] = [];
    const store = Object.assign(transactional((claim) => claim), {
      join: async () => {
        joined.push('join');
        return undefined as never;
      },
    });
    const outcome = await createIdempotency({ store }).runInTransaction(base, async () => ({ status: 201 }), { tx: tx as never }).catch((error: unknown) => error);
    expect(outcome).toMatchObject({ code: 'invalid_option' });
    expect(joined).toEqual([]);
  });

  it("calls the store's join with the caller's tx, and the handler gets the tx join hands it", async () => {
    const seen: unknown[] = [];
    const inner = transactional((claim) => claim);
    const store: TransactionalStore<{ id: string }> = {
      ...inner,
      join: (tx, input, work) => inner.transaction(input, (claim) => work(claim, { id: `joined ${tx.id}` })),
    };
    const result = await createIdempotency({ store }).runInTransaction(base, async ({ tx }) => {
      seen.push(tx);
      return { status: 201 };
    }, { tx: { id: 'caller' } });
    expect(result.kind).toBe('executed');
    expect(seen).toEqual([{ id: 'joined caller' }]);
  });
});
