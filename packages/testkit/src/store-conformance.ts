import {
  createIdempotency,
  type IdempotencyStore,
  type Scope,
  type StoredResponse,
  stripeReplayPolicy,
} from '@oncely/core';
import { isTransactionalStore } from '@oncely/core/adapter';
import fc from 'fast-check';
import { modelCommands, type ModelReal } from './store-model.js';
import { sleep, type TestRunner, uniqueKey } from './runner.js';

/** Options of {@link runStoreConformance}. */
export interface StoreConformanceOptions<S extends IdempotencyStore> {
  /** Names the suite, e.g. `postgres (pg)`. */
  readonly name: string;
  /** Returns a ready store; called once per test. Give each call its own table or prefix if you can. */
  readonly createStore: () => S | Promise<S>;
  /** Closes a store made by `createStore` (default: `store.close()`). */
  readonly closeStore?: (store: S) => Promise<void>;
  /**
   * Lets time pass for the store's expiry clock. Default: real sleep, which suits every server-clock
   * store; a memory store with a manual clock advances it instead.
   */
  readonly advanceTime?: (ms: number) => Promise<void>;
  /**
   * Reads the raw record behind the adapter's back (Auth.js style), to prove what reached storage.
   * Returns undefined when nothing is stored for the scope.
   */
  readonly inspect?: (store: S, scope: Scope) => Promise<{ readonly state: string } | undefined>;
  /** Lease used by expiry tests, in ms (default 400: long enough for a slow CI round trip). */
  readonly shortLeaseMs?: number;
  /** Concurrent attempts in the race test (default 50). */
  readonly raceSize?: number;
  /** fast-check runs per property (default 30). */
  readonly numRuns?: number;
  /** Per-test timeout in ms (default 30 000). */
  readonly timeoutMs?: number;
}

const scopeOf = (key: string, over: Partial<Scope> = {}): Scope => ({
  tenant: 'tenant-a',
  principal: 'alice',
  operation: 'payments.create.v1',
  key,
  ...over,
});

const created: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json', location: '/v1/payments/pay_1' },
  body: { id: 'pay_1', amount: '10.00', note: 'naïve café ✓ 😀', nested: { list: [1, 2.5, null, true] } },
  resourceId: 'pay_1',
};

/**
 * The storage contract as tests: run it against a real server and a store passes or it does not
 * implement oncely. Covers atomic claim-or-read, a concurrent race with one winner, lease takeover and
 * fencing, expiry, fingerprint binding, scope isolation (including separator collisions), purge, the
 * transactional mode when declared, and a fast-check model of the state machine with scheduled
 * interleavings.
 *
 * ```ts
 * import { describe, it, expect } from 'vitest';
 * import { runStoreConformance } from '@oncely/testkit';
 * runStoreConformance({ describe, it, expect }, { name: 'my store', createStore: () => myStore() });
 * ```
 */
export function runStoreConformance<S extends IdempotencyStore>(
  runner: TestRunner,
  options: StoreConformanceOptions<S>,
): void {
  const { describe, it, expect } = runner;
  const lease = options.shortLeaseMs ?? 400;
  const raceSize = options.raceSize ?? 50;
  const numRuns = options.numRuns ?? 30;
  const timeout = options.timeoutMs ?? 30_000;
  const advance = options.advanceTime ?? sleep;
  const LONG = 60_000;
  const DAY = 86_400_000;

  /** Runs `body` with a fresh store and always closes it. */
  const withStore = (body: (store: S) => Promise<void>) => async () => {
    const store = await options.createStore();
    try {
      await body(store);
    } finally {
      await (options.closeStore ? options.closeStore(store) : store.close());
    }
  };
  const test = (name: string, body: (store: S) => Promise<void>) => it(name, withStore(body), timeout);
  const claimInput = (scope: Scope, token: string, over: { fingerprint?: string; leaseMs?: number; retentionMs?: number } = {}) => ({
    scope,
    token,
    fingerprint: over.fingerprint ?? 'f'.repeat(64),
    leaseMs: over.leaseMs ?? LONG,
    retentionMs: over.retentionMs ?? DAY,
  });
  const raw = async (store: S, scope: Scope) => (options.inspect ? options.inspect(store, scope) : undefined);

  describe(`${options.name}: claim-or-read`, () => {
    test('a first claim owns the key with fence 1 and the record reads as in progress', async (store) => {
      const scope = scopeOf(uniqueKey('first'));
      const claim = await store.claim(claimInput(scope, 't1'));
      expect(claim).toEqual({ kind: 'claimed', fence: 1, takeover: false });
      const record = await store.get(scope);
      expect(record?.state).toBe('in_progress');
      expect(record?.fence).toBe(1);
      expect(record?.fingerprint).toBe('f'.repeat(64));
      expect(record?.scope).toEqual(scope);
      expect(record?.leaseRemainingMs ?? -1).toBeGreaterThan(LONG / 2);
      expect(record?.leaseRemainingMs ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(LONG);
      if (options.inspect) expect((await raw(store, scope))?.state).toBe('in_progress');
    });

    test('a second claim of a held key reads the record and does not take it', async (store) => {
      const scope = scopeOf(uniqueKey('held'));
      await store.claim(claimInput(scope, 'owner'));
      const second = await store.claim(claimInput(scope, 'intruder'));
      expect(second.kind).toBe('existing');
      if (second.kind !== 'existing') return;
      expect(second.record.state).toBe('in_progress');
      expect(await store.complete({ scope, token: 'intruder', state: 'succeeded', response: created, retentionMs: DAY })).toBe('fence_lost');
      expect(await store.complete({ scope, token: 'owner', state: 'succeeded', response: created, retentionMs: DAY })).toBe('ok');
    });

    test('complete stores the outcome and every later claim replays it exactly', async (store) => {
      const scope = scopeOf(uniqueKey('complete'));
      await store.claim(claimInput(scope, 'owner'));
      expect(await store.complete({ scope, token: 'owner', state: 'succeeded', response: created, retentionMs: DAY })).toBe('ok');
      for (const token of ['later-1', 'later-2']) {
        const again = await store.claim(claimInput(scope, token));
        expect(again.kind).toBe('existing');
        if (again.kind !== 'existing') return;
        expect(again.record.state).toBe('succeeded');
        expect(again.record.response).toEqual(created);
        expect(again.record.leaseRemainingMs).toBeUndefined();
      }
      expect((await store.get(scope))?.response).toEqual(created);
      if (options.inspect) expect((await raw(store, scope))?.state).toBe('succeeded');
    });

    test('a final failure is stored and replayed like a success', async (store) => {
      const scope = scopeOf(uniqueKey('final'));
      const declined: StoredResponse = { status: 402, body: { type: 'insufficient_funds' } };
      await store.claim(claimInput(scope, 'owner'));
      await store.complete({ scope, token: 'owner', state: 'failed_final', response: declined, retentionMs: DAY });
      const again = await store.claim(claimInput(scope, 'retry'));
      expect(again.kind === 'existing' && again.record.state).toBe('failed_final');
      expect(again.kind === 'existing' && again.record.response).toEqual(declined);
    });

    test('a completed outcome cannot be overwritten, not even by its owner', async (store) => {
      const scope = scopeOf(uniqueKey('immutable'));
      await store.claim(claimInput(scope, 'owner'));
      await store.complete({ scope, token: 'owner', state: 'succeeded', response: created, retentionMs: DAY });
      const overwrite = await store.complete({ scope, token: 'owner', state: 'failed_final', response: { status: 500 }, retentionMs: DAY });
      expect(overwrite).toBe('fence_lost');
      expect(await store.release({ scope, token: 'owner' })).toBe('fence_lost');
      expect((await store.get(scope))?.response).toEqual(created);
    });

    test('release deletes the in-progress record so the next claim executes', async (store) => {
      const scope = scopeOf(uniqueKey('release'));
      await store.claim(claimInput(scope, 'owner'));
      expect(await store.release({ scope, token: 'stranger' })).toBe('fence_lost');
      expect(await store.release({ scope, token: 'owner' })).toBe('ok');
      expect(await store.get(scope)).toBeUndefined();
      if (options.inspect) expect(await raw(store, scope)).toBeUndefined();
      const retry = await store.claim(claimInput(scope, 'retry'));
      expect(retry.kind).toBe('claimed');
    });

    test('complete, release and extend on a key nobody claimed are refused', async (store) => {
      const scope = scopeOf(uniqueKey('absent'));
      expect(await store.complete({ scope, token: 'ghost', state: 'succeeded', response: created, retentionMs: DAY })).toBe('fence_lost');
      expect(await store.release({ scope, token: 'ghost' })).toBe('fence_lost');
      expect(await store.extend({ scope, token: 'ghost', leaseMs: LONG })).toBe('fence_lost');
      expect(await store.get(scope)).toBeUndefined();
    });
  });

  describe(`${options.name}: leases and fencing`, () => {
    test('a lapsed lease is taken over with a new token and a higher fence', async (store) => {
      const scope = scopeOf(uniqueKey('takeover'));
      await store.claim(claimInput(scope, 'crashed', { leaseMs: lease }));
      const early = await store.claim(claimInput(scope, 'too-early'));
      expect(early.kind).toBe('existing');
      await advance(lease + 150);
      const takeover = await store.claim(claimInput(scope, 'successor'));
      expect(takeover).toEqual({ kind: 'claimed', fence: 2, takeover: true });
      expect((await store.get(scope))?.fence).toBe(2);
    });

    test("after a takeover the stale owner's complete, release and extend are rejected", async (store) => {
      const scope = scopeOf(uniqueKey('fencing'));
      await store.claim(claimInput(scope, 'stale', { leaseMs: lease }));
      await advance(lease + 150);
      await store.claim(claimInput(scope, 'fresh'));
      expect(await store.extend({ scope, token: 'stale', leaseMs: LONG })).toBe('fence_lost');
      expect(await store.complete({ scope, token: 'stale', state: 'succeeded', response: { status: 200, body: 'stale' }, retentionMs: DAY })).toBe('fence_lost');
      expect(await store.release({ scope, token: 'stale' })).toBe('fence_lost');
      expect((await store.get(scope))?.state).toBe('in_progress');
      expect(await store.complete({ scope, token: 'fresh', state: 'succeeded', response: created, retentionMs: DAY })).toBe('ok');
      expect((await store.get(scope))?.response).toEqual(created);
    });

    test('an owner whose lease lapsed cannot complete even before anyone takes over', async (store) => {
      const scope = scopeOf(uniqueKey('lapsed'));
      await store.claim(claimInput(scope, 'slow', { leaseMs: lease }));
      await advance(lease + 150);
      expect(await store.complete({ scope, token: 'slow', state: 'succeeded', response: created, retentionMs: DAY })).toBe('fence_lost');
    });

    test('extend keeps a lease alive past its original expiry', async (store) => {
      const scope = scopeOf(uniqueKey('extend'));
      await store.claim(claimInput(scope, 'worker', { leaseMs: lease }));
      expect(await store.extend({ scope, token: 'worker', leaseMs: LONG })).toBe('ok');
      await advance(lease + 150);
      const other = await store.claim(claimInput(scope, 'other'));
      expect(other.kind).toBe('existing');
      expect(await store.complete({ scope, token: 'worker', state: 'succeeded', response: created, retentionMs: DAY })).toBe('ok');
    });

    test('a lapsed lease is not taken over by a request with a different fingerprint', async (store) => {
      const scope = scopeOf(uniqueKey('lapsed-mismatch'));
      await store.claim(claimInput(scope, 'first', { leaseMs: lease, fingerprint: 'a'.repeat(64) }));
      await advance(lease + 150);
      const other = await store.claim(claimInput(scope, 'second', { fingerprint: 'b'.repeat(64) }));
      expect(other.kind).toBe('existing');
      expect(other.kind === 'existing' && other.record.fingerprint).toBe('a'.repeat(64));
    });
  });

  describe(`${options.name}: expiry and cleanup`, () => {
    test('an expired record is absent for every reader before cleanup removes it', async (store) => {
      const scope = scopeOf(uniqueKey('expired'));
      await store.claim(claimInput(scope, 'owner', { leaseMs: lease, retentionMs: lease }));
      await store.complete({ scope, token: 'owner', state: 'succeeded', response: created, retentionMs: lease });
      expect((await store.get(scope))?.state).toBe('succeeded');
      await advance(lease + 150);
      expect(await store.get(scope)).toBeUndefined();
      const late = await store.claim(claimInput(scope, 'late', { fingerprint: 'c'.repeat(64) }));
      expect(late).toEqual({ kind: 'claimed', fence: 1, takeover: false });
    });

    test('purgeExpired deletes expired records in bounded batches and keeps live ones', async (store) => {
      const prefix = uniqueKey('purge');
      const doomed = [0, 1, 2, 3, 4].map((i) => scopeOf(`${prefix}-old-${i}`));
      const kept = scopeOf(`${prefix}-live`);
      for (const scope of doomed) {
        await store.claim(claimInput(scope, 'owner', { leaseMs: lease, retentionMs: lease }));
      }
      await store.claim(claimInput(kept, 'owner'));
      await advance(lease + 150);
      let purged = 0;
      for (let round = 0; round < 100; round++) {
        const batch = await store.purgeExpired(2);
        expect(batch).toBeLessThanOrEqual(2);
        purged += batch;
        if (batch === 0) break;
      }
      // Stores with native TTL may have removed the records themselves, so purge finds fewer.
      const purgeable = options.inspect && !store.capabilities.nativeTtl;
      expect(purged).toBeGreaterThanOrEqual(purgeable ? doomed.length : 0);
      if (purgeable) {
        for (const scope of doomed) expect(await raw(store, scope)).toBeUndefined();
      }
      expect((await store.get(kept))?.state).toBe('in_progress');
    });
  });

  describe(`${options.name}: through the engine`, () => {
    test(`${raceSize} concurrent attempts with one key execute the handler exactly once`, async (store) => {
      const engine = createIdempotency({ store, leaseMs: LONG });
      const key = uniqueKey('race');
      let executions = 0;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const attempts = Array.from({ length: raceSize }, () =>
        engine.run({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount: '10.00' } }, async () => {
          executions += 1;
          await gate;
          return { status: 201, body: { id: 'pay_race' } };
        }),
      );
      await sleep(50);
      release();
      const results = await Promise.all(attempts);
      expect(executions).toBe(1);
      expect(results.filter((r) => r.kind === 'executed').length).toBe(1);
      expect(results.filter((r) => r.kind === 'mismatch').length).toBe(0);
      for (const r of results) if (r.kind === 'replayed') expect(r.response.body).toEqual({ id: 'pay_race' });
      const late = await Promise.all(
        Array.from({ length: 10 }, () =>
          engine.run({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount: '10.00' } }, async () => {
            executions += 1;
            return { status: 201, body: { id: 'pay_other' } };
          }),
        ),
      );
      expect(executions).toBe(1);
      for (const r of late) {
        expect(r.kind).toBe('replayed');
        if (r.kind === 'replayed') expect(r.response).toEqual({ status: 201, body: { id: 'pay_race' } });
      }
    });

    test('a handler error releases the key and the retry executes', async (store) => {
      const engine = createIdempotency({ store, leaseMs: LONG });
      const request = { tenant: 'acme', operation: 'orders.create.v1', key: uniqueKey('error'), request: { sku: 'book-1' } };
      let executions = 0;
      let failure: unknown;
      try {
        await engine.run(request, async () => {
          executions += 1;
          throw new Error('payment gateway down');
        });
      } catch (error) {
        failure = error;
      }
      expect((failure as Error | undefined)?.message).toBe('payment gateway down');
      expect(await engine.get(request)).toBeUndefined();
      const retry = await engine.run(request, async () => {
        executions += 1;
        return { status: 201, body: { id: 'ord_1' } };
      });
      expect(retry.kind).toBe('executed');
      expect(executions).toBe(2);
    });

    test("a different fingerprint never executes and never receives the other request's response", async (store) => {
      const engine = createIdempotency({ store, leaseMs: LONG });
      const key = uniqueKey('mismatch');
      const first = await engine.run({ tenant: 'acme', operation: 'payments.create.v1', key, request: { amount: '10.00' } }, async () => ({
        status: 201,
        body: { id: 'pay_10', secret: 'only-for-the-first-request' },
      }));
      expect(first.kind).toBe('executed');
      let executed = false;
      const second = await engine.run({ tenant: 'acme', operation: 'payments.create.v1', key, request: { amount: '100.00' } }, async () => {
        executed = true;
        return { status: 201 };
      });
      expect(second).toEqual({ kind: 'mismatch' });
      expect(executed).toBe(false);
    });

    test('the Stripe policy stores a 500 and replays it; the default policy releases it', async (store) => {
      const stripe = createIdempotency({ store, leaseMs: LONG, replay: stripeReplayPolicy });
      const standard = createIdempotency({ store, leaseMs: LONG });
      const fail = async () => ({ status: 500, body: { error: 'boom' } });
      const stripeKey = { tenant: 'acme', operation: 'charges.create.v1', key: uniqueKey('stripe'), request: {} };
      await stripe.run(stripeKey, fail);
      expect((await stripe.run(stripeKey, fail)).kind).toBe('replayed');
      const standardKey = { ...stripeKey, key: uniqueKey('default') };
      await standard.run(standardKey, fail);
      expect(await standard.get(standardKey)).toBeUndefined();
      expect((await standard.run(standardKey, fail)).kind).toBe('executed');
    });
  });

  describe(`${options.name}: scope isolation`, () => {
    test('the same key in another tenant, principal or operation reaches another record', async (store) => {
      const key = uniqueKey('isolation');
      const scopes = [
        scopeOf(key),
        scopeOf(key, { tenant: 'tenant-b' }),
        scopeOf(key, { principal: 'bob' }),
        scopeOf(key, { principal: '' }),
        scopeOf(key, { operation: 'payments.refund.v1' }),
      ];
      for (const scope of scopes) {
        expect((await store.claim(claimInput(scope, `owner-${scope.tenant}-${scope.principal}-${scope.operation}`))).kind).toBe('claimed');
      }
      for (const scope of scopes) expect((await store.get(scope))?.scope).toEqual(scope);
    });

    test('scopes that differ only in where a separator falls never share a record', async (store) => {
      const run = uniqueKey('separator');
      const visible = [':', '|', '/', '\\', '{', '}', '"', ',', '.', '#', '%', '-', '_', '='];
      const scopes: Scope[] = [];
      for (const sep of [...visible, ' ', '\u00e9', '\u{1F600}']) {
        scopes.push(scopeOf(run, { tenant: `a${sep}b`, principal: 'c' }), scopeOf(run, { tenant: 'a', principal: `b${sep}c` }));
      }
      for (const sep of visible) {
        scopes.push(scopeOf(run, { principal: `p${sep}q` }), scopeOf(`q${sep}${run}`, { principal: 'p' }));
      }
      scopes.push(scopeOf(`v1:${run}`, { operation: 'pay' }), scopeOf(run, { operation: 'pay:v1' }));
      for (const scope of scopes) {
        expect((await store.claim(claimInput(scope, `owner-${scopes.indexOf(scope)}`))).kind).toBe('claimed');
      }
      for (const scope of scopes) expect((await store.get(scope))?.scope).toEqual(scope);
    });

    it(
      'distinct scopes never collide, for any characters (property)',
      withStore(async (store) => {
        const part = fc.string({ unit: fc.constantFrom('a', ':', '|', '/', '{', '}', '\\', '"', ' ', '\u00e9', '\u{1F600}'), maxLength: 4 });
        const keyPart = fc.string({ unit: fc.constantFrom('a', ':', '|', '/', '{', '}', '\\', '"', '-'), minLength: 1, maxLength: 4 });
        await fc.assert(
          fc.asyncProperty(
            fc.tuple(part, part, keyPart),
            fc.tuple(part, part, keyPart),
            async ([t1, p1, k1], [t2, p2, k2]) => {
              const run = uniqueKey('prop');
              const a = scopeOf(`${run}${k1}`, { tenant: `t${t1}`, principal: p1 });
              const b = scopeOf(`${run}${k2}`, { tenant: `t${t2}`, principal: p2 });
              expect((await store.claim(claimInput(a, 'a'))).kind).toBe('claimed');
              const second = await store.claim(claimInput(b, 'b'));
              const same = a.tenant === b.tenant && a.principal === b.principal && a.key === b.key;
              expect(second.kind).toBe(same ? 'existing' : 'claimed');
            },
          ),
          { numRuns },
        );
      }),
      timeout,
    );
  });

    describe(`${options.name}: transactions`, () => {
    const transactional = (name: string, body: (store: S) => Promise<void>) =>
      test(name, async (store) => {
        expect(isTransactionalStore(store)).toBe(store.capabilities.transactions);
        if (store.capabilities.transactions) await body(store);
      });
    const request = (key: string, amount = '10.00') => ({ tenant: 'acme', operation: 'payments.create.v1', key, request: { amount } });

    transactional(`${raceSize} concurrent transactional attempts execute once; the others replay the committed result`, async (store) => {
      const engine = createIdempotency({ store, leaseMs: LONG });
      const key = uniqueKey('tx-race');
      let executions = 0;
      const results = await Promise.all(
        Array.from({ length: Math.min(raceSize, 20) }, () =>
          engine.runInTransaction(request(key), async () => {
            executions += 1;
            await sleep(30);
            return { status: 201, body: { id: 'pay_tx' } };
          }),
        ),
      );
      expect(executions).toBe(1);
      expect(results.filter((r) => r.kind === 'executed').length).toBe(1);
      for (const r of results) {
        if (r.kind !== 'executed') expect(r).toEqual({ kind: 'replayed', state: 'succeeded', response: { status: 201, body: { id: 'pay_tx' } } });
      }
    });

    transactional('a handler error rolls the claim back: no record, and the retry executes', async (store) => {
      const engine = createIdempotency({ store, leaseMs: LONG });
      const key = uniqueKey('tx-rollback');
      const failure = await engine
        .runInTransaction(request(key), async () => {
          throw new Error('crash before commit');
        })
        .catch((error: unknown) => error);
      expect((failure as Error).message).toBe('crash before commit');
      expect(await engine.get(request(key))).toBeUndefined();
      if (options.inspect) expect(await raw(store, scopeOf(key, { tenant: 'acme', principal: '' }))).toBeUndefined();
      expect((await engine.runInTransaction(request(key), async () => ({ status: 201 }))).kind).toBe('executed');
    });

    transactional('a released outcome (5xx) rolls back, so the retry executes', async (store) => {
      const engine = createIdempotency({ store, leaseMs: LONG });
      const key = uniqueKey('tx-release');
      const first = await engine.runInTransaction(request(key), async () => ({ status: 503 }));
      expect(first).toEqual({ kind: 'executed', state: 'released', response: { status: 503 } });
      expect(await engine.get(request(key))).toBeUndefined();
    });

    transactional('a different fingerprint in a transaction never executes', async (store) => {
      const engine = createIdempotency({ store, leaseMs: LONG });
      const key = uniqueKey('tx-mismatch');
      await engine.runInTransaction(request(key), async () => ({ status: 201 }));
      let executed = false;
      const second = await engine.runInTransaction(request(key, '99.00'), async () => {
        executed = true;
        return { status: 201 };
      });
      expect(second).toEqual({ kind: 'mismatch' });
      expect(executed).toBe(false);
    });
  });

  describe(`${options.name}: state machine (fast-check model)`, () => {
      it(
        'every sequence of claims, completes, releases and extends matches the model',
        withStore(async (store) => {
          await fc.assert(
            fc.asyncProperty(fc.scheduler(), fc.commands(modelCommands(), { maxCommands: 25 }), async (scheduler, commands) => {
              const real: ModelReal = { store, scope: scopeOf(uniqueKey('model')), expect };
              await fc.scheduledModelRun(scheduler, () => ({ model: { record: undefined, tokens: [] }, real }), commands);
            }),
            { numRuns },
          );
        }),
        timeout * 2,
      );

      it(
        'concurrent attempts in any interleaving never hold the key together, and a completed outcome is final',
        withStore(async (store) => {
          await fc.assert(
            fc.asyncProperty(
              fc.scheduler(),
              fc.array(fc.constantFrom<'complete' | 'release'>('complete', 'release'), { minLength: 2, maxLength: 6 }),
              async (scheduler, plans) => {
                const scope = scopeOf(uniqueKey('interleave'));
                let holders = 0;
                let maxHolders = 0;
                const completedBy: number[] = [];
                const attempts = plans.map(async (plan, index) => {
                  await scheduler.schedule(Promise.resolve(), `start ${index}`);
                  const completedBefore = completedBy.length > 0;
                  const claim = await store.claim(claimInput(scope, `token-${index}`));
                  if (claim.kind !== 'claimed') {
                    if (completedBefore) expect(claim.record.state).toBe('succeeded');
                    return;
                  }
                  expect(completedBefore).toBe(false);
                  holders += 1;
                  maxHolders = Math.max(maxHolders, holders);
                  await scheduler.schedule(Promise.resolve(), `${plan} ${index}`);
                  holders -= 1;
                  if (plan === 'complete') {
                    const done = await store.complete({ scope, token: `token-${index}`, state: 'succeeded', response: { status: 200, body: index }, retentionMs: DAY });
                    expect(done).toBe('ok');
                    completedBy.push(index);
                  } else {
                    expect(await store.release({ scope, token: `token-${index}` })).toBe('ok');
                  }
                });
                await scheduler.waitFor(Promise.all(attempts));
                expect(maxHolders).toBeLessThanOrEqual(1);
                expect(completedBy.length).toBeLessThanOrEqual(1);
                const record = await store.get(scope);
                if (completedBy.length === 1) expect(record?.response?.body).toBe(completedBy[0]);
                else expect(record).toBeUndefined();
              },
            ),
            { numRuns },
          );
        }),
        timeout * 2,
      );
    });
}
