import { createIdempotency, type EngineEvent, memoryStore } from '@oncely/core';
import { describe, expect, it } from 'vitest';
import { bindings, type RouteSpec, withServer } from './support/bindings.js';
import { deferred, expectProblem, failingStore, newLedger, paymentRoute } from './support/payments.js';
import { postJson } from './support/send.js';

describe.each(bindings)('$name: in progress, validation, failures', (binding) => {
  it('a concurrent duplicate gets 409 with Retry-After in seconds; once the first finishes, retries replay it', async () => {
    const ledger = newLedger();
    const gate = deferred();
    const leaseMs = 20_000;
    const store = memoryStore();
    const scope = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'key-1' };
    await withServer(binding, createIdempotency({ store, leaseMs }), [paymentRoute(ledger, {}, gate.promise)], async (url) => {
      const first = postJson(url, '/payments', { amount: 10 }, 'key-1');
      // Send the duplicate only once the first request holds the claim (its handler waits on the gate).
      while ((await store.get(scope))?.state !== 'in_progress') await new Promise((resolve) => setTimeout(resolve, 5));
      const conflict = await postJson(url, '/payments', { amount: 10 }, 'key-1');
      expectProblem(conflict, 'request-in-progress', 409);
      const retryAfter = Number(conflict.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(leaseMs / 1000);
      gate.resolve();
      expect((await first).status).toBe(201);
      const replay = await postJson(url, '/payments', { amount: 10 }, 'key-1');
      expect(replay.headers['idempotent-replayed']).toBe('true');
    });
    expect(ledger.charges).toHaveLength(1);
  });

  it('a validation failure answers 4xx problem+json with the errors, stores nothing, and leaves the key usable', async () => {
    const store = memoryStore();
    const ledger = newLedger();
    const route = paymentRoute(ledger, {
      validate: (body) =>
        Number((body as { amount?: unknown }).amount) > 0
          ? undefined
          : { kind: 'invalid', status: 422, detail: 'amount must be positive', errors: [{ field: 'amount', code: 'too_small' }] },
    });
    await withServer(binding, createIdempotency({ store }), [route], async (url) => {
      const refused = expectProblem(await postJson(url, '/payments', { amount: -5 }, 'key-1'), 'invalid-request', 422);
      expect(refused.errors).toEqual([{ field: 'amount', code: 'too_small' }]);
      expect(store.size).toBe(0);
      expect(ledger.charges).toHaveLength(0);
      expect((await postJson(url, '/payments', { amount: 5 }, 'key-1')).status).toBe(201);
    });
    expect(ledger.charges).toHaveLength(1);
  });

  it('a storage outage at claim answers 503 problem+json and the handler never runs (fail closed)', async () => {
    const ledger = newLedger();
    const engine = createIdempotency({ store: failingStore(memoryStore(), { claim: true }) });
    await withServer(binding, engine, [paymentRoute(ledger)], async (url) => {
      const response = await postJson(url, '/payments', { amount: 10 }, 'key-1');
      expectProblem(response, 'storage-unavailable', 503);
      expect(response.headers['retry-after']).toBe('1');
    });
    expect(ledger.charges).toHaveLength(0);
  });

  it('a storage outage after the handler ran still delivers its true response, so the client does not repeat it', async () => {
    const ledger = newLedger();
    const events: EngineEvent[] = [];
    const engine = createIdempotency({ store: failingStore(memoryStore(), { complete: true }), onEvent: (event) => events.push(event) });
    await withServer(binding, engine, [paymentRoute(ledger)], async (url) => {
      const response = await postJson(url, '/payments', { amount: 10 }, 'key-1');
      expect(response.status).toBe(201);
      expect((response.json() as { id: string }).id).toBe('pay_1');
    });
    expect(ledger.charges).toHaveLength(1);
    // The engine retried the failing complete for its budget (about 10 attempts in 5 s) before it answered.
    expect(events.filter((event) => event.type === 'storage_error').length).toBeGreaterThanOrEqual(3);
  });

  it('a 5xx is released so the retry runs again; a 4xx outcome is final and replayed', async () => {
    let calls = 0;
    const flaky: RouteSpec = {
      method: 'POST',
      path: '/flaky',
      options: { operation: 'flaky.v1' },
      handle: async () => {
        calls++;
        return calls === 1
          ? { status: 503, body: { kind: 'json', value: { error: 'downstream' } } }
          : { status: 402, body: { kind: 'json', value: { error: 'card_declined' } } };
      },
    };
    const store = memoryStore();
    await withServer(binding, createIdempotency({ store }), [flaky], async (url) => {
      expect((await postJson(url, '/flaky', {}, 'key-1')).status).toBe(503);
      expect(store.size).toBe(0);
      expect((await postJson(url, '/flaky', {}, 'key-1')).status).toBe(402);
      const replay = await postJson(url, '/flaky', {}, 'key-1');
      expect(replay.status).toBe(402);
      expect(replay.headers['idempotent-replayed']).toBe('true');
    });
    expect(calls).toBe(2);
  });

  it('a handler that throws releases the claim: the retry executes again', async () => {
    let calls = 0;
    const throwing: RouteSpec = {
      method: 'POST',
      path: '/throws',
      options: { operation: 'throws.v1' },
      handle: async () => {
        calls++;
        if (calls === 1) throw new Error('boom');
        return { status: 201, body: { kind: 'json', value: { ok: true } } };
      },
    };
    const store = memoryStore();
    await withServer(binding, createIdempotency({ store }), [throwing], async (url) => {
      expect((await postJson(url, '/throws', {}, 'key-1')).status).toBe(500);
      expect(store.size).toBe(0);
      expect((await postJson(url, '/throws', {}, 'key-1')).status).toBe(201);
    });
    expect(calls).toBe(2);
  });
});

describe.each(bindings)('$name: a dropped connection', (binding) => {
  it('a client that gives up before the answer does not release the claim: the outcome is stored and the retry replays it', async () => {
    const ledger = newLedger();
    const gate = deferred();
    const store = memoryStore();
    const scope = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'key-1' };
    await withServer(binding, createIdempotency({ store }), [paymentRoute(ledger, {}, gate.promise)], async (url) => {
      const controller = new AbortController();
      const first = fetch(`${url}/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer acme/alice', 'idempotency-key': 'key-1' },
        body: '{"amount":10}',
        signal: controller.signal,
      }).catch((error: unknown) => error);
      while ((await store.get(scope))?.state !== 'in_progress') await new Promise((resolve) => setTimeout(resolve, 5));
      // The client times out: its socket closes while the handler is still charging.
      controller.abort();
      await first;
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await store.get(scope))?.state).toBe('in_progress');
      gate.resolve();
      while ((await store.get(scope))?.state === 'in_progress') await new Promise((resolve) => setTimeout(resolve, 5));
      const retry = await postJson(url, '/payments', { amount: 10 }, 'key-1');
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
    });
    expect(ledger.charges).toHaveLength(1);
  });

  it("the handler's context.signal aborts when the client goes away, read before or after the disconnect", async () => {
    for (const reads of ['before', 'after'] as const) {
      const gate = deferred();
      const seen = deferred<boolean>();
      const route: RouteSpec = {
        method: 'POST',
        path: '/watch',
        options: { operation: 'watch.v1' },
        async handle({ context }) {
          if (context.kind === 'unkeyed') throw new Error('unreachable: the route requires a key');
          const early = reads === 'before' ? context.signal : undefined;
          await gate.promise;
          const signal = early ?? context.signal;
          const aborted = signal.aborted || (await Promise.race([
            new Promise<boolean>((resolve) => signal.addEventListener('abort', () => resolve(true), { once: true })),
            new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2_000)),
          ]));
          seen.resolve(aborted);
          return { status: 201, body: { kind: 'json', value: { aborted } } };
        },
      };
      const store = memoryStore();
      await withServer(binding, createIdempotency({ store }), [route], async (url) => {
        const controller = new AbortController();
        const request = fetch(`${url}/watch`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer acme/alice', 'idempotency-key': `watch-${reads}` },
          body: '{}',
          signal: controller.signal,
        }).catch((error: unknown) => error);
        while (store.size === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        controller.abort();
        await request;
        await new Promise((resolve) => setTimeout(resolve, 50));
        gate.resolve();
        expect(await seen.promise).toBe(true);
      });
    }
  });
});
