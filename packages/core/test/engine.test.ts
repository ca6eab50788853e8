import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  createIdempotency,
  type EngineEvent,
  fingerprint,
  type IdempotencyStore,
  isOncelyError,
  isStorageError,
  keyHash,
  manualClock,
  memoryStore,
  type OncelyErrorCode,
  stripeReplayPolicy,
  defaultReplayPolicy,
} from '../src/index.js';

/** A memory store that records every call, and can be told to fail. */
function spyStore(
  options: {
    failOn?: Partial<Record<keyof IdempotencyStore, number>>;
    /** Applies the call, then throws as if the reply was lost on the way back. */
    loseReplyOn?: Partial<Record<keyof IdempotencyStore, number>>;
    /** Applies the call, then applies it again and answers the second reply (a client that resent it after a lost reply, as ioredis does). */
    resendOn?: Partial<Record<keyof IdempotencyStore, number>>;
    clock?: { now(): number };
  } = {},
) {
  const inner = memoryStore(options.clock ? { clock: options.clock } : {});
  const calls: string[] = [];
  const failures = { ...options.failOn };
  const lostReplies = { ...options.loseReplyOn };
  const resends = { ...options.resendOn };
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        calls.push(String(property));
        const remaining = failures[property as keyof IdempotencyStore];
        if (remaining) {
          failures[property as keyof IdempotencyStore] = remaining - 1;
          throw new Error(`connection reset during ${String(property)}`);
        }
        let result = await value.apply(target, args);
        const resend = resends[property as keyof IdempotencyStore];
        if (resend) {
          resends[property as keyof IdempotencyStore] = resend - 1;
          result = await value.apply(target, args);
        }
        const lose = lostReplies[property as keyof IdempotencyStore];
        if (lose) {
          lostReplies[property as keyof IdempotencyStore] = lose - 1;
          throw new Error(`connection reset after ${String(property)} was applied`);
        }
        return result;
      };
    },
  });
  return { store, calls, inner };
}

const base = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k_7f91', request: { amount: '10.00' } };
const created = async () => ({ status: 201, headers: { location: '/v1/payments/pay_1' }, body: { id: 'pay_1' } });

async function codeOf(promise: Promise<unknown>): Promise<OncelyErrorCode | string> {
  try {
    await promise;
  } catch (error) {
    return isOncelyError(error) ? error.code : `not an OncelyError: ${error}`;
  }
  return 'did not throw';
}

describe('bad input is rejected before the store is touched', () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  it.each([
    ['an empty key', { key: '' }, 'missing_key'],
    ['a missing key', { key: undefined }, 'missing_key'],
    ['a key of 256 characters', { key: 'k'.repeat(256) }, 'key_too_long'],
    ['a key with a space', { key: 'has space' }, 'invalid_key_characters'],
    ['a key with a newline', { key: 'abc\n' }, 'invalid_key_characters'],
    ['a key with non-ASCII', { key: 'clé' }, 'invalid_key_characters'],
    ['a missing tenant', { tenant: '' }, 'missing_tenant'],
    ['a tenant with a control character', { tenant: 'ac\u0000me' }, 'invalid_tenant'],
    ['a non-string principal', { principal: 42 }, 'invalid_principal'],
    ['a missing operation', { operation: '' }, 'missing_operation'],
    ['a raw URL as operation', { operation: '/v1/payments' }, 'invalid_operation'],
    ['a NaN in the payload', { request: { amount: Number.NaN } }, 'invalid_request_payload'],
    ['a BigInt in the payload', { request: { amount: 10n } }, 'invalid_request_payload'],
    ['a cyclic payload', { request: cyclic }, 'invalid_request_payload'],
  ])('%s → %s, and the store saw no call', async (_name, override, code) => {
    const { store, calls } = spyStore();
    const engine = createIdempotency({ store });
    let executed = false;
    const request = { ...base, ...override } as typeof base;
    expect(
      await codeOf(
        engine.run(request, async () => {
          executed = true;
          return { status: 200 };
        }),
      ),
    ).toBe(code);
    expect(calls).toEqual([]);
    expect(executed).toBe(false);
  });

  it('keys outside 1–255 visible ASCII are always rejected without a store call (property)', async () => {
    const invalidKey = fc.oneof(
      fc.string({ minLength: 256, maxLength: 300, unit: fc.constantFrom('a', 'B', '7') }),
      fc
        .tuple(fc.string({ maxLength: 20 }), fc.integer({ min: 0, max: 0x2ff }).filter((c) => c < 0x21 || c > 0x7e), fc.string({ maxLength: 20 }))
        .map(([a, c, b]) => `${a}${String.fromCharCode(c)}${b}`),
    );
    await fc.assert(
      fc.asyncProperty(invalidKey, async (key) => {
        const { store, calls } = spyStore();
        const code = await codeOf(createIdempotency({ store }).run({ ...base, key }, created));
        expect(['key_too_long', 'invalid_key_characters', 'missing_key']).toContain(code);
        expect(calls).toEqual([]);
      }),
    );
  });

  it('every key of 1–255 visible ASCII characters is accepted (property)', async () => {
    const visible = fc.string({ minLength: 1, maxLength: 255, unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)) });
    await fc.assert(
      fc.asyncProperty(visible, async (key) => {
        const result = await createIdempotency({ store: memoryStore() }).run({ ...base, key }, created);
        expect(result.kind).toBe('executed');
      }),
      { numRuns: 50 },
    );
  });

  it('runInTransaction on a store without transactions says so and touches nothing', async () => {
    const { store, calls } = spyStore();
    expect(await codeOf(createIdempotency({ store }).runInTransaction(base, created))).toBe('capability_missing');
    expect(calls).toEqual([]);
  });

  it.each([
    ['leaseMs 0', { leaseMs: 0 }],
    ['a negative retention', { retentionMs: -1 }],
    ['retention shorter than the lease', { leaseMs: 10_000, retentionMs: 5_000 }],
    ['a fractional lease', { leaseMs: 1.5 }],
    ['the reference strategy without rebuild', { oversize: 'reference' as const }],
  ])('rejects %s when the engine is created', (_name, options) => {
    expect(() => createIdempotency({ store: memoryStore(), ...options })).toThrowError(/oncely:/);
  });
});

describe('fingerprint and key hash', () => {
  it('the record and the handler get the same digests as the public fingerprint() and keyHash()', async () => {
    const store = memoryStore();
    let handlerKeyHash: string | undefined;
    await createIdempotency({ store }).run(base, async (context) => {
      handlerKeyHash = context.keyHash;
      return created();
    });
    const record = await store.get({ ...base });
    expect(record?.fingerprint).toBe(await fingerprint(base.operation, base.request));
    expect(handlerKeyHash).toBe(await keyHash(base.key));
  });

  it('an invalid payload rejects the returned promise; run never throws synchronously', async () => {
    const { store, calls } = spyStore();
    const pending = createIdempotency({ store }).run({ ...base, request: { amount: 10n } }, created);
    expect(pending).toBeInstanceOf(Promise);
    expect(await codeOf(pending)).toBe('invalid_request_payload');
    expect(calls).toEqual([]);
  });

  it("without Node's hash (as in browsers) the engine hashes through Web Crypto with the same results", async () => {
    const events: EngineEvent[] = [];
    const noNodeCrypto = vi.spyOn(process, 'getBuiltinModule').mockReturnValue(undefined as never);
    vi.resetModules();
    try {
      const web = await import('../src/index.js');
      const { sha256HexNow } = await import('../src/fingerprint/sha256.js');
      expect(sha256HexNow('abc')).toBeInstanceOf(Promise);
      const store = memoryStore();
      const engine = web.createIdempotency({ store, onEvent: (event) => events.push(event) });
      expect((await engine.run(base, created)).kind).toBe('executed');
      expect((await engine.run(base, created)).kind).toBe('replayed');
      expect((await engine.run({ ...base, request: { amount: '99.00' } }, created)).kind).toBe('mismatch');
      expect(await codeOf(engine.run({ ...base, request: { amount: Number.NaN } }, created))).toBe('invalid_request_payload');
      expect((await store.get({ ...base }))?.fingerprint).toBe(await fingerprint(base.operation, base.request));
    } finally {
      noNodeCrypto.mockRestore();
      vi.resetModules();
    }
    const expected = await keyHash(base.key);
    expect(events.map((event) => ('keyHash' in event ? event.keyHash : undefined))).toEqual(events.map(() => expected));
  });
});

describe('storage failure fails closed', () => {
  /** Runs `base` once on `store`; the error it failed with, and whether the handler ran. */
  async function failedRun(store: IdempotencyStore, onEvent?: (event: EngineEvent) => void) {
    let executed = false;
    const failure = await createIdempotency({ store, onEvent })
      .run(base, async () => {
        executed = true;
        return { status: 201 };
      })
      .catch((error: unknown) => error);
    return { failure, executed };
  }

  it('a claim that fails throws StorageError with the cause, and the handler never runs', async () => {
    const { failure, executed } = await failedRun(spyStore({ failOn: { claim: 1 } }).store);
    expect(isStorageError(failure)).toBe(true);
    expect(((failure as Error).cause as Error).message).toBe('connection reset during claim');
    expect((failure as Error).message).toContain('oncely/memory: claim failed');
    expect(executed).toBe(false);
  });

  it('a store that throws instead of rejecting fails closed the same way, and the event says so', async () => {
    const events: EngineEvent[] = [];
    const store = { ...memoryStore(), claim: () => { throw new Error('claim threw synchronously'); } } as IdempotencyStore;
    const { failure, executed } = await failedRun(store, (event) => events.push(event));
    expect(isStorageError(failure)).toBe(true);
    expect(((failure as Error).cause as Error).message).toBe('claim threw synchronously');
    expect(executed).toBe(false);
    expect(events.map((event) => event.type)).toEqual(['storage_error']);
  });

  it('a store that answers with plain values instead of promises still works (stores written in JavaScript)', async () => {
    const inner = memoryStore();
    const records = new Map<string, unknown>();
    const store = {
      ...inner,
      claim: (input: Parameters<IdempotencyStore['claim']>[0]) => {
        const existing = records.get(input.scope.key);
        if (existing) return { kind: 'existing', record: existing };
        records.set(input.scope.key, { ...input, state: 'succeeded', fence: 1, createdAt: new Date(), expiresAt: new Date(), response: { status: 201, body: { id: 'pay_sync' } } });
        return { kind: 'claimed', fence: 1, takeover: false };
      },
      complete: () => 'ok',
    } as unknown as IdempotencyStore;
    const engine = createIdempotency({ store });
    expect((await engine.run(base, created)).kind).toBe('executed');
    const replay = await engine.run(base, created);
    expect(replay).toMatchObject({ kind: 'replayed', response: { status: 201, body: { id: 'pay_sync' } } });
  });

  it('a complete that fails briefly is retried, so the outcome is still saved', async () => {
    const { store, inner } = spyStore({ failOn: { complete: 2 } });
    const result = await createIdempotency({ store }).run(base, created);
    expect(result.kind).toBe('executed');
    expect((await inner.get({ ...base, principal: 'alice' }))?.state).toBe('succeeded');
  });

  it('a complete that landed but whose reply was lost is recognised on retry, not reported as a lost lease', async () => {
    const { store, inner } = spyStore({ loseReplyOn: { complete: 1 } });
    const result = await createIdempotency({ store }).run(base, created);
    expect(result.kind).toBe('executed');
    expect((await inner.get({ ...base }))?.response?.body).toEqual({ id: 'pay_1' });
  });

  it('a complete that the client resent after its reply was lost (answered fence_lost) is recognised as landed, not reported as a lost lease', async () => {
    const { store, inner } = spyStore({ resendOn: { complete: 1 } });
    const events: EngineEvent[] = [];
    const result = await createIdempotency({ store, onEvent: (event) => events.push(event) }).run(base, created);
    expect(result.kind).toBe('executed');
    expect((await inner.get({ ...base }))?.response?.body).toEqual({ id: 'pay_1' });
    expect(events.some((event) => event.type === 'fence_lost')).toBe(false);
  });

  it('a complete refused because another owner took over is still lease_lost', async () => {
    let now = 0;
    const clock = { now: () => now };
    const { store, inner } = spyStore({ clock });
    const engine = createIdempotency({ store, clock: { now: () => now, sleep: async () => undefined }, leaseMs: 1_000 });
    const outcome = await engine
      .run(base, async () => {
        now += 2_000;
        // The lease lapsed: a retry of the same request takes the key over (fence 2) while this handler still runs.
        const taken = await inner.claim({ scope: { ...base, principal: 'alice' }, fingerprint: (await inner.get({ ...base, principal: 'alice' }))!.fingerprint, token: 'other', leaseMs: 1_000, retentionMs: 60_000 });
        expect(taken).toMatchObject({ kind: 'claimed', fence: 2 });
        return created();
      })
      .catch((error: unknown) => error);
    expect(outcome).toMatchObject({ code: 'lease_lost' });
  });

  /** A clock whose sleep moves time on at once: the engine's retry budget runs out without waiting. */
  const steppingClock = () => {
    let now = 1_000_000;
    return { now: () => now, sleep: async (ms: number) => void (now += ms), elapsed: () => now - 1_000_000 };
  };

  it('a complete that keeps failing surfaces StorageError within its budget and leaves the key in progress, never released', async () => {
    const clock = steppingClock();
    const { store, inner, calls } = spyStore({ failOn: { complete: 1_000 }, clock });
    const failure = await createIdempotency({ store, clock }).run(base, created).catch((error: unknown) => error);
    expect(isStorageError(failure)).toBe(true);
    // Released would let a retry charge again; in progress makes it wait for the lease instead.
    expect((await inner.get({ ...base }))?.state).toBe('in_progress');
    // Retried for at most 5 s: 25, 50, ... ms doubling up to 1 s between attempts, 10 attempts in all.
    expect(clock.elapsed()).toBeLessThanOrEqual(5_000);
    expect(clock.elapsed()).toBeGreaterThan(3_000);
    expect(calls.filter((call) => call === 'complete').length).toBe(10);
  });

  it('a complete that fails for 2 s (a restart) is retried until it lands, so the outcome is saved', async () => {
    const clock = steppingClock();
    // 25 + 50 + 100 + 200 + 400 + 800 + 1000 ms of backoff: the 8th attempt comes 2.575 s after the first.
    const { store, inner } = spyStore({ failOn: { complete: 7 }, clock });
    const result = await createIdempotency({ store, clock }).run(base, created);
    expect(result.kind).toBe('executed');
    expect((await inner.get({ ...base }))?.state).toBe('succeeded');
  });

  it("a complete's retries never outlast the lease", async () => {
    const clock = steppingClock();
    const { store } = spyStore({ failOn: { complete: 1_000 }, clock });
    const failure = await createIdempotency({ store, clock, leaseMs: 300 }).run(base, created).catch((error: unknown) => error);
    expect(isStorageError(failure)).toBe(true);
    expect(clock.elapsed()).toBeLessThanOrEqual(300);
  });

  it('get and purgeExpired wrap store failures too', async () => {
    const { store } = spyStore({ failOn: { get: 1, purgeExpired: 1 } });
    const engine = createIdempotency({ store });
    expect(await codeOf(engine.get(base))).toBe('storage_error');
    expect(await codeOf(engine.purgeExpired(10))).toBe('storage_error');
  });
});

describe('outcomes and replay', () => {
  it('replays status, headers and body of the first execution, and never runs the handler again', async () => {
    const engine = createIdempotency({ store: memoryStore() });
    let executions = 0;
    const handler = async () => {
      executions += 1;
      return created();
    };
    const first = await engine.run(base, handler);
    const second = await engine.run(base, handler);
    expect(first).toEqual({ kind: 'executed', state: 'succeeded', response: await created() });
    expect(second).toEqual({ kind: 'replayed', state: 'succeeded', response: await created() });
    expect(executions).toBe(1);
  });

  it('a thrown error releases the key and rethrows the same error', async () => {
    const engine = createIdempotency({ store: memoryStore() });
    const boom = new Error('boom');
    expect(await engine.run(base, async () => Promise.reject(boom)).catch((e: unknown) => e)).toBe(boom);
    expect(await engine.get(base)).toBeUndefined();
  });

  it('a handler that returns no valid status is misuse (invalid_state) and releases the key', async () => {
    const engine = createIdempotency({ store: memoryStore() });
    expect(await codeOf(engine.run(base, async () => ({ status: 42 })))).toBe('invalid_state');
    expect(await engine.get(base)).toBeUndefined();
  });

  it.each([['pay\u00001'], ['pay_\uD800'], ['line\nbreak'], [42]])(
    'a handler that returns resourceId %j is told so before anything is stored, and the key is released',
    async (resourceId) => {
      const engine = createIdempotency({ store: memoryStore() });
      const handler = async () => ({ status: 201, resourceId: resourceId as string });
      expect(await codeOf(engine.run(base, handler))).toBe('invalid_state');
      expect(await engine.get(base)).toBeUndefined();
    },
  );

  it('a resourceId with non-ASCII letters and emoji (whole surrogate pairs) is stored and replayed as given', async () => {
    const engine = createIdempotency({ store: memoryStore() });
    await engine.run(base, async () => ({ status: 201, resourceId: 'zahlung-ü-😀' }));
    expect(await engine.run(base, created)).toMatchObject({ kind: 'replayed', response: { resourceId: 'zahlung-ü-😀' } });
  });

  it.each([
    [200, 'succeeded', 'succeeded'],
    [201, 'succeeded', 'succeeded'],
    [303, 'succeeded', 'succeeded'],
    [400, 'failed_final', 'failed_final'],
    [402, 'failed_final', 'failed_final'],
    [404, 'failed_final', 'failed_final'],
    [422, 'failed_final', 'failed_final'],
    [408, 'release', 'failed_final'],
    [409, 'release', 'release'],
    [425, 'release', 'failed_final'],
    [429, 'release', 'release'],
    [500, 'release', 'failed_final'],
    [503, 'release', 'failed_final'],
  ] as const)('status %i: default policy → %s, Stripe policy → %s', (status, standard, stripe) => {
    expect(defaultReplayPolicy({ status })).toBe(standard);
    expect(stripeReplayPolicy({ status })).toBe(stripe);
  });

  it('a custom policy decides what is stored', async () => {
    const engine = createIdempotency({ store: memoryStore(), replay: ({ status }) => (status === 503 ? 'failed_final' : 'release') });
    await engine.run(base, async () => ({ status: 503 }));
    expect((await engine.get(base))?.state).toBe('failed_final');
  });
});

describe('large responses', () => {
  const big = { status: 201, body: { blob: 'x'.repeat(2_000) }, resourceId: 'pay_big' };

  it('omit: stores status and headers only, says so in an event, and still never executes twice', async () => {
    const events: EngineEvent[] = [];
    const engine = createIdempotency({ store: memoryStore(), maxStoredBytes: 1_000, onEvent: (e) => events.push(e) });
    let executions = 0;
    const handler = async () => {
      executions += 1;
      return big;
    };
    await engine.run(base, handler);
    const replay = await engine.run(base, handler);
    expect(executions).toBe(1);
    expect(replay).toEqual({ kind: 'replayed', state: 'succeeded', response: { status: 201, resourceId: 'pay_big' } });
    expect(events.find((e) => e.type === 'response_not_stored')).toMatchObject({ limitBytes: 1_000, strategy: 'omit' });
  });

  it('reference: stores the resource id and rebuilds the response on replay', async () => {
    const engine = createIdempotency({
      store: memoryStore(),
      maxStoredBytes: 1_000,
      oversize: 'reference',
      rebuild: async (stored) => ({ status: stored.status, body: { rebuiltFrom: stored.resourceId } }),
    });
    await engine.run(base, async () => big);
    const replay = await engine.run(base, created);
    expect(replay).toEqual({ kind: 'replayed', state: 'succeeded', response: { status: 201, body: { rebuiltFrom: 'pay_big' } } });
  });

  it('a request can lower the limit for itself, and the event reports the real size', async () => {
    const events: EngineEvent[] = [];
    const engine = createIdempotency({ store: memoryStore(), onEvent: (e) => events.push(e) });
    await engine.run({ ...base, maxStoredBytes: 10 }, async () => ({ status: 200, body: { text: 'more than ten bytes' } }));
    expect((await engine.get(base))?.response?.bodyOmitted).toBe(true);
    expect(events.find((e) => e.type === 'response_not_stored')).toMatchObject({ bytes: 30, limitBytes: 10 });
    expect(await codeOf(engine.run({ ...base, key: 'other', maxStoredBytes: -1 }, created))).toBe('invalid_option');
  });

  it('the limit counts UTF-8 bytes, not characters', async () => {
    const events: EngineEvent[] = [];
    const engine = createIdempotency({ store: memoryStore(), onEvent: (e) => events.push(e) });
    // {"text":"€€€€€€"} is 17 characters and 29 UTF-8 bytes; an emoji is 2 UTF-16 units and 4 bytes.
    await engine.run({ ...base, maxStoredBytes: 28 }, async () => ({ status: 200, body: { text: '€€€€€€' } }));
    expect(events.find((e) => e.type === 'response_not_stored')).toMatchObject({ bytes: 29, limitBytes: 28 });
    await engine.run({ ...base, key: 'fits', maxStoredBytes: 29 }, async () => ({ status: 200, body: { text: '€€€€€€' } }));
    expect((await engine.get({ ...base, key: 'fits' }))?.response?.body).toEqual({ text: '€€€€€€' });
    await engine.run({ ...base, key: 'emoji', maxStoredBytes: 5 }, async () => ({ status: 200, body: '\u{1F600}' }));
    expect(events.filter((e) => e.type === 'response_not_stored').at(-1)).toMatchObject({ bytes: 6, limitBytes: 5 });
  });

  it('a body that is not JSON is not stored, but the outcome still is', async () => {
    const engine = createIdempotency({ store: memoryStore() });
    await engine.run(base, async () => ({ status: 200, body: { n: 1n } }));
    expect((await engine.get(base))?.state).toBe('succeeded');
    expect((await engine.get(base))?.response?.bodyOmitted).toBe(true);
  });
});

describe('leases', () => {
  it("aborts the handler's signal when the lease lapses, and extendLease renews it", async () => {
    const clock = manualClock(1_000);
    const engine = createIdempotency({ store: memoryStore({ clock }), clock, leaseMs: 1_000 });
    let resolveHandler!: () => void;
    // The handler says when it waits: each advance settles on a macrotask, slow on a loaded host.
    let reachedEnd!: () => void;
    const atEnd = new Promise<void>((resolve) => (reachedEnd = resolve));
    const seen: boolean[] = [];
    const running = engine.run(base, async (context) => {
      await clock.advance(600);
      await context.extendLease(1_000);
      await clock.advance(600);
      seen.push(context.signal.aborted);
      await clock.advance(500);
      seen.push(context.signal.aborted);
      reachedEnd();
      await new Promise<void>((resolve) => (resolveHandler = resolve));
      return { status: 200 };
    });
    await atEnd;
    resolveHandler();
    expect(await codeOf(running)).toBe('lease_lost');
    expect(seen).toEqual([false, true]);
  });

  it('an owner that lost its lease to a takeover cannot save its outcome: lease_lost, and the new owner wins', async () => {
    const clock = manualClock(0);
    const store = memoryStore({ clock });
    const engine = createIdempotency({ store, clock, leaseMs: 1_000 });
    const events: EngineEvent[] = [];
    const observed = createIdempotency({ store, clock, leaseMs: 1_000, onEvent: (e) => events.push(e) });
    let release!: () => void;
    const slow = engine.run(base, async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return { status: 201, body: { id: 'from-the-stale-owner' } };
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await clock.advance(1_500);
    const successor = await observed.run(base, async (context) => {
      expect(context.fence).toBe(2);
      return { status: 201, body: { id: 'from-the-successor' } };
    });
    release();
    expect(await codeOf(slow)).toBe('lease_lost');
    expect(successor.kind).toBe('executed');
    expect((await engine.get(base))?.response?.body).toEqual({ id: 'from-the-successor' });
    expect(events.find((e) => e.type === 'claimed')).toMatchObject({ takeover: true, fence: 2 });
  });

  it("forwards the caller's abort to the handler", async () => {
    const controller = new AbortController();
    const engine = createIdempotency({ store: memoryStore() });
    const result = engine.run({ ...base, signal: controller.signal }, async (context) => {
      controller.abort(new Error('client went away'));
      expect(context.signal.aborted).toBe(true);
      throw context.signal.reason;
    });
    expect(((await result.catch((e: unknown) => e)) as Error).message).toBe('client went away');
  });

  it('a handler can spread its context and keep every member, signal and keyHash included', async () => {
    const seen = await createIdempotency({ store: memoryStore() }).run(base, async (context) => {
      const copy = { kind: 'lease', ...context };
      return { status: 201, body: { keys: Object.keys(copy).sort(), signal: copy.signal instanceof AbortSignal, hash: copy.keyHash } };
    });
    expect((seen as { response: { body: unknown } }).response.body).toEqual({
      keys: ['extendLease', 'fence', 'keyHash', 'kind', 'scope', 'signal', 'token'],
      signal: true,
      hash: await keyHash(base.key),
    });
  });

  it('a handler can destructure every member of its context, signal and keyHash included', async () => {
    const store = memoryStore();
    const seen = await createIdempotency({ store }).run(base, async ({ token, fence, scope, keyHash: hash, signal, extendLease }) => {
      await extendLease(5_000);
      return { status: 201, body: { token, fence, scope, hash, aborted: signal.aborted } };
    });
    const body = (seen as { response: { body: Record<string, unknown> } }).response.body;
    expect(body).toEqual({ token: expect.stringMatching(/^[0-9a-f-]{36}\.[0-9a-z]+$/), fence: 1, scope: { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k_7f91' }, hash: await keyHash(base.key), aborted: false });
  });

  it('property: every claim holds a token no other claim holds, across engines, keys and retries of one key', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 4 }), async (engines) => {
        const tokens: string[] = [];
        for (const [keys, failures] of engines) {
          const engine = createIdempotency({ store: memoryStore() });
          for (let key = 0; key < keys; key++) {
            // Each failed attempt releases its claim; the retry claims again and must hold a new token.
            for (let attempt = 0; attempt <= failures; attempt++) {
              await engine
                .run({ ...base, key: `k${key}` }, async ({ token }) => {
                  tokens.push(token);
                  if (attempt < failures) throw new Error('transient');
                  return { status: 201 };
                })
                .catch(() => undefined);
            }
          }
        }
        expect(tokens).toHaveLength(engines.reduce((sum, [keys, failures]) => sum + keys * (failures + 1), 0));
        expect(new Set(tokens).size).toBe(tokens.length);
      }),
      { numRuns: 50 },
    );
  });

  it('a handler listening on its signal hears the lease lapse once, with lease_lost as the reason', async () => {
    const clock = manualClock(0);
    const engine = createIdempotency({ store: memoryStore({ clock }), clock, leaseMs: 1_000 });
    const reasons: unknown[] = [];
    const running = engine.run(base, async ({ signal }) => {
      expect(signal.aborted).toBe(false);
      signal.addEventListener('abort', () => reasons.push(signal.reason));
      await clock.advance(1_500);
      await clock.advance(1_500);
      return { status: 200 };
    });
    expect(await codeOf(running)).toBe('lease_lost');
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatchObject({ code: 'lease_lost' });
  });

  it('a signal first read after the lease lapsed is already aborted with lease_lost (the timer starts only when it is read)', async () => {
    const clock = manualClock(0);
    const engine = createIdempotency({ store: memoryStore({ clock }), clock, leaseMs: 1_000 });
    let seen: { aborted: boolean; code?: string } | undefined;
    const running = engine.run(base, async (context) => {
      await clock.advance(1_001);
      seen = { aborted: context.signal.aborted, code: (context.signal.reason as { code?: string })?.code };
      return { status: 200 };
    });
    expect(await codeOf(running)).toBe('lease_lost');
    expect(seen).toEqual({ aborted: true, code: 'lease_lost' });
  });

  it('a lapse nobody observed still aborts the signal when the handler then extends the lease', async () => {
    const clock = manualClock(0);
    const engine = createIdempotency({ store: memoryStore({ clock }), clock, leaseMs: 1_000 });
    let seen: { aborted: boolean; code?: string } | undefined;
    await engine
      .run(base, async ({ extendLease, signal }) => {
        await clock.advance(1_500);
        await extendLease(5_000).catch(() => undefined);
        seen = { aborted: signal.aborted, code: (signal.reason as { code?: string }).code };
        return { status: 200 };
      })
      .catch(() => undefined);
    expect(seen).toEqual({ aborted: true, code: 'lease_lost' });
  });

  it('a lease timer that fires before the clock reaches the deadline waits again instead of aborting early', async () => {
    let now = 0;
    const timers: { at: number; callback: () => void }[] = [];
    const clock = {
      now: () => now,
      sleep: async () => undefined,
      schedule: (ms: number, callback: () => void) => {
        timers.push({ at: now + ms, callback });
        return () => undefined;
      },
    };
    const engine = createIdempotency({ store: memoryStore({ clock }), clock, leaseMs: 1_000 });
    const observed: boolean[] = [];
    await engine.run(base, async ({ signal }) => {
      observed.push(signal.aborted);
      now = 999;
      timers.shift()?.callback(); // fired 1 ms early
      observed.push(signal.aborted);
      expect(timers[0]?.at).toBe(1_000);
      now = 1_000;
      timers.shift()?.callback();
      observed.push(signal.aborted);
      return { status: 200 };
    }).catch(() => undefined);
    expect(observed).toEqual([false, false, true]);
  });

  it("a caller that aborted before the claim hands the handler an already aborted signal with the caller's reason", async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone before we started'));
    const engine = createIdempotency({ store: memoryStore() });
    const result = await engine.run({ ...base, signal: controller.signal }, async (context) => ({
      status: 200,
      body: { aborted: context.signal.aborted, reason: (context.signal.reason as Error).message },
    }));
    expect(result).toMatchObject({ kind: 'executed', response: { body: { aborted: true, reason: 'gone before we started' } } });
  });

  it('the signal read after the handler ended is not aborted by a later caller abort (the link is undone)', async () => {
    const controller = new AbortController();
    const engine = createIdempotency({ store: memoryStore() });
    let signal!: AbortSignal;
    await engine.run({ ...base, signal: controller.signal }, async (context) => {
      signal = context.signal;
      return { status: 200 };
    });
    controller.abort(new Error('too late'));
    expect(signal.aborted).toBe(false);
  });

  it('answers in_progress with the remaining lease while another attempt runs', async () => {
    const clock = manualClock(0);
    const engine = createIdempotency({ store: memoryStore({ clock }), clock, leaseMs: 10_000 });
    let release!: () => void;
    const first = engine.run(base, async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return { status: 201 };
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await clock.advance(4_000);
    expect(await engine.run(base, created)).toEqual({ kind: 'in_progress', retryAfterMs: 6_000 });
    release();
    expect((await first).kind).toBe('executed');
  });
});

describe('events', () => {
  it('report each path with a keyHash, and the raw key never appears in any event', async () => {
    const events: EngineEvent[] = [];
    const engine = createIdempotency({ store: memoryStore(), onEvent: (e) => events.push(e) });
    await engine.run(base, created);
    await engine.run(base, created);
    await engine.run({ ...base, request: { amount: '99.00' } }, created);
    await engine.purgeExpired(10);
    expect(events.map((e) => e.type)).toEqual(['claimed', 'completed', 'replayed', 'mismatch', 'purged']);
    const hashes = new Set(events.flatMap((e) => ('keyHash' in e ? [e.keyHash] : [])));
    expect(hashes.size).toBe(1);
    expect([...hashes][0]).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.stringify(events)).not.toContain(base.key);
  });

  it('a listener that throws never changes the outcome', async () => {
    const engine = createIdempotency({
      store: memoryStore(),
      onEvent: () => {
        throw new Error('metrics sink down');
      },
    });
    expect((await engine.run(base, created)).kind).toBe('executed');
  });
});
