import { createIdempotency, memoryStore } from '@oncely/core';
import { describe, expect, it } from 'vitest';
import { bindings, withServer } from './support/bindings.js';
import { deferred, expectProblem, newLedger, paymentRoute } from './support/payments.js';
import { postJson, send } from './support/send.js';

const post = (url: string, key: string, contentType: string, body: string | Uint8Array) =>
  send(url, '/payments', {
    method: 'POST',
    headers: { 'content-type': contentType, authorization: 'Bearer acme/alice', 'idempotency-key': key },
    body,
  });

describe.each(bindings)('$name: request bodies', (binding) => {
  it('a JSON body nested 10,000 deep is a 400 problem, never a 5xx, and leaves no record', async () => {
    const store = memoryStore();
    const ledger = newLedger();
    await withServer(binding, createIdempotency({ store }), [paymentRoute(ledger)], async (url) => {
      for (const text of [`${'['.repeat(10_000)}${']'.repeat(10_000)}`, `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`]) {
        const problem = expectProblem(await post(url, 'deep', 'application/json', text), 'invalid-request-body', 400);
        expect(problem.detail).toContain('deeper than');
      }
      // The limit is a route option: a body within it goes through.
      expect((await postJson(url, '/payments', { amount: 1, nested: [[[1]]] }, 'shallow')).status).toBe(201);
    });
    expect(store.size).toBe(1);
    expect(ledger.charges).toHaveLength(1);
  });

  it('maxBodyDepth sets the limit per route', async () => {
    const ledger = newLedger();
    await withServer(binding, createIdempotency({ store: memoryStore() }), [paymentRoute(ledger, { maxBodyDepth: 2 })], async (url) => {
      expect((await postJson(url, '/payments', { amount: 1, tags: ['a'] }, 'two')).status).toBe(201);
      expectProblem(await postJson(url, '/payments', { amount: 1, tags: [['a']] }, 'three'), 'invalid-request-body', 400);
    });
    expect(ledger.charges).toHaveLength(1);
  });

  it('malformed JSON is an application/problem+json 400 with no record, like every other refusal', async () => {
    const store = memoryStore();
    const ledger = newLedger();
    await withServer(binding, createIdempotency({ store }), [paymentRoute(ledger)], async (url) => {
      for (const text of ['{"amount":', '{amount: 10}', '\u0000']) {
        expectProblem(await post(url, 'bad-json', 'application/json', text), 'invalid-request-body', 400);
      }
    });
    expect(store.size).toBe(0);
    expect(ledger.charges).toHaveLength(0);
  });

  it('form-encoded bodies are fingerprinted by their fields: order and percent-encoding do not matter, values do', async () => {
    const store = memoryStore();
    const ledger = newLedger();
    const form = 'application/x-www-form-urlencoded';
    await withServer(binding, createIdempotency({ store }), [paymentRoute(ledger)], async (url) => {
      const first = await post(url, 'form-1', form, 'amount=10&currency=eur&metadata%5Border%5D=o+1');
      expect(first.status).toBe(201);
      expect(first.json()).toMatchObject({ amount: 10 });
      const reordered = await post(url, 'form-1', form, 'currency=%65ur&metadata[order]=o%201&amount=10');
      expect(reordered.status).toBe(201);
      expect(reordered.headers['idempotent-replayed']).toBe('true');
      expectProblem(await post(url, 'form-1', form, 'amount=11&currency=eur&metadata%5Border%5D=o+1'), 'idempotency-key-reused', 422);
      expectProblem(await post(url, 'form-1', form, 'amount=10&currency=eur'), 'idempotency-key-reused', 422);
    });
    expect(ledger.charges).toHaveLength(1);
    expect(store.size).toBe(1);
  });

  it('a multipart body is a 415 problem on a keyed request: its boundary changes on every send, so it cannot be fingerprinted', async () => {
    const store = memoryStore();
    const ledger = newLedger();
    const boundary = 'x-oncely-boundary';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="amount"\r\n\r\n10\r\n--${boundary}--\r\n`;
    await withServer(binding, createIdempotency({ store }), [paymentRoute(ledger)], async (url) => {
      const problem = expectProblem(await post(url, 'multi', `multipart/form-data; boundary=${boundary}`, body), 'unsupported-request-body', 415);
      expect(String(problem.detail)).toMatch(/multipart|Unsupported/i);
    });
    expect(store.size).toBe(0);
    expect(ledger.charges).toHaveLength(0);
  });

  it('in the stripe profile every answer to a well-formed key echoes it in Idempotency-Key; the ietf profile does not', async () => {
    const gate = deferred();
    const ledger = newLedger();
    const stripe = { ...paymentRoute(ledger, { profile: 'stripe' }, gate.promise), path: '/payments' };
    const ietf = { ...paymentRoute(ledger), path: '/ietf' };
    await withServer(binding, createIdempotency({ store: memoryStore() }), [stripe, ietf], async (url) => {
      const first = postJson(url, '/payments', { amount: 10 }, 'k-echo');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const busy = await postJson(url, '/payments', { amount: 10 }, 'k-echo');
      expect(busy.status).toBe(409);
      expect(busy.headers['idempotency-key']).toBe('k-echo');
      gate.resolve();
      const original = await first;
      expect(original.status).toBe(201);
      expect(original.headers['idempotency-key']).toBe('k-echo');
      const replay = await postJson(url, '/payments', { amount: 10 }, '"k-echo"');
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers['idempotency-key']).toBe('k-echo');
      const reused = await postJson(url, '/payments', { amount: 11 }, 'k-echo');
      expect(reused.status).toBe(400);
      expect(reused.headers['idempotency-key']).toBe('k-echo');
      expect((await postJson(url, '/payments', { amount: 10 }, 'bad key')).headers['idempotency-key']).toBeUndefined();
      const plain = await postJson(url, '/ietf', { amount: 10 }, 'k-ietf');
      expect(plain.status).toBe(201);
      expect(plain.headers['idempotency-key']).toBeUndefined();
    });
  });

  it('Retry-After on a 409 estimates when the result is ready from observed durations, never the whole lease', async () => {
    let gate: Promise<void> | undefined;
    const ledger = newLedger();
    const route = paymentRoute(ledger);
    const slow = { ...route, handle: async (input: Parameters<typeof route.handle>[0]) => {
      await gate;
      return route.handle(input);
    } };
    // A 30 s lease, as by default: the old answer was the time left on it.
    await withServer(binding, createIdempotency({ store: memoryStore(), leaseMs: 30_000 }), [slow], async (url) => {
      const observed = deferred();
      gate = observed.promise;
      const timed = postJson(url, '/payments', { amount: 1 }, 'observed');
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Nothing observed yet: poll in a second rather than wait out the lease.
      const early = await postJson(url, '/payments', { amount: 1 }, 'observed');
      expect(early.status).toBe(409);
      expect(early.headers['retry-after']).toBe('1');
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      observed.resolve();
      expect((await timed).status).toBe(201);
      const held = deferred();
      gate = held.promise;
      const running = postJson(url, '/payments', { amount: 2 }, 'running');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const busy = await postJson(url, '/payments', { amount: 2 }, 'running');
      expectProblem(busy, 'request-in-progress', 409);
      // One execution took about 1.2 s: ready within 2 s, far below the 30 s lease.
      expect(busy.headers['retry-after']).toBe('2');
      held.resolve();
      expect((await running).status).toBe(201);
    });
  });
});
