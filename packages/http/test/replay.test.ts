import { randomBytes } from 'node:crypto';
import { createIdempotency, memoryStore } from '@oncely/core';
import { describe, expect, it } from 'vitest';
import { bindings, type RouteSpec, withServer } from './support/bindings.js';
import { expectProblem, newLedger, paymentRoute } from './support/payments.js';
import { postJson, send } from './support/send.js';

describe.each(bindings)('$name: replay', (binding) => {
  it('a retry replays the stored status, allowlisted headers and body with Idempotent-Replayed, and charges once', async () => {
    const store = memoryStore();
    const ledger = newLedger();
    await withServer(binding, createIdempotency({ store }), [paymentRoute(ledger)], async (url) => {
      const first = await postJson(url, '/payments', { amount: 10 }, 'key-1');
      expect(first.status).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(first.headers['set-cookie']).toEqual(['session=secret; HttpOnly', 'theme=dark']);
      expect(first.headers['x-trace-id']).toBeDefined();

      const retry = await postJson(url, '/payments', { amount: 10 }, 'key-1');
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body.equals(first.body)).toBe(true);
      expect(retry.json()).toEqual({ id: 'pay_1', tenant: 'acme', amount: 10, note: 'naïve café ✓ 😀' });
      expect(retry.headers.location).toBe('/payments/pay_1');
      expect(retry.headers['content-type']).toBe(first.headers['content-type']);
      expect(retry.headers['content-length']).toBe(String(first.body.length));
      // Cookies and trace ids are not on the allowlist: never stored, never replayed.
      expect(retry.headers['set-cookie']).toBeUndefined();
      expect(retry.headers['x-trace-id']).toBeUndefined();
    });
    expect(ledger.charges).toEqual([{ id: 'pay_1', tenant: 'acme', amount: 10 }]);
    const record = await store.get({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'key-1' });
    expect(record?.state).toBe('succeeded');
    const storedHeaders = Object.keys(record?.response?.headers ?? {});
    expect(storedHeaders).toEqual(expect.arrayContaining(['content-type', 'location']));
    // Express adds an ETag of its own, which is on the allowlist; nothing off the list is stored.
    expect(storedHeaders.filter((name) => !['content-type', 'location', 'etag'].includes(name))).toEqual([]);
  });

  it('the same key with a different body is refused with 422, and the first outcome still replays', async () => {
    const ledger = newLedger();
    await withServer(binding, createIdempotency({ store: memoryStore() }), [paymentRoute(ledger)], async (url) => {
      expect((await postJson(url, '/payments', { amount: 10 }, 'key-1')).status).toBe(201);
      expectProblem(await postJson(url, '/payments', { amount: 100 }, 'key-1'), 'idempotency-key-reused', 422);
      const replay = await postJson(url, '/payments', { amount: 10 }, 'key-1');
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect((replay.json() as { amount: number }).amount).toBe(10);
    });
    expect(ledger.charges.map((charge) => charge.amount)).toEqual([10]);
  });

  it('stripe profile: a reused key is 400 with Stripe error shape inside the problem', async () => {
    const ledger = newLedger();
    await withServer(binding, createIdempotency({ store: memoryStore() }), [paymentRoute(ledger, { profile: 'stripe' })], async (url) => {
      await postJson(url, '/payments', { amount: 10 }, 'key-1');
      const problem = expectProblem(await postJson(url, '/payments', { amount: 99 }, 'key-1'), 'idempotency-key-reused', 400);
      expect(problem.error).toEqual({ type: 'idempotency_error', message: problem.detail });
      const missing = expectProblem(await postJson(url, '/payments', { amount: 99 }, undefined), 'missing-idempotency-key', 400);
      expect((missing.error as { type: string }).type).toBe('invalid_request_error');
    });
    expect(ledger.charges).toHaveLength(1);
  });

  it('select limits the fingerprint to the named fields; a trace field outside it does not count as a change', async () => {
    const ledger = newLedger();
    const route = paymentRoute(ledger, { select: ['amount', 'customer.id'] });
    await withServer(binding, createIdempotency({ store: memoryStore() }), [route], async (url) => {
      await postJson(url, '/payments', { amount: 10, customer: { id: 'c1', name: 'A' }, traceId: 't1' }, 'key-1');
      const replay = await postJson(url, '/payments', { customer: { name: 'B', id: 'c1' }, amount: 10, traceId: 't2' }, 'key-1');
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expectProblem(await postJson(url, '/payments', { amount: 10, customer: { id: 'c2' } }, 'key-1'), 'idempotency-key-reused', 422);
    });
    expect(ledger.charges).toHaveLength(1);
  });

  it('the same key on another path is a different request (422), not a replay', async () => {
    const ledger = newLedger();
    const orders = (id: string): RouteSpec => ({ ...paymentRoute(ledger), method: 'PATCH', path: `/orders/${id}`, options: { operation: 'orders.update.v1' } });
    await withServer(binding, createIdempotency({ store: memoryStore() }), [orders('1'), orders('2')], async (url) => {
      const patch = (id: string) =>
        send(url, `/orders/${id}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json', authorization: 'Bearer acme/alice', 'idempotency-key': 'k' },
          body: '{"amount":5}',
        });
      expect((await patch('1')).status).toBe(201);
      expectProblem(await patch('2'), 'idempotency-key-reused', 422);
    });
    expect(ledger.charges).toHaveLength(1);
  });

  it('the same key sent by two tenants reaches two records and two charges', async () => {
    const store = memoryStore();
    const ledger = newLedger();
    await withServer(binding, createIdempotency({ store }), [paymentRoute(ledger)], async (url) => {
      const acme = await postJson(url, '/payments', { amount: 10 }, 'shared-key', 'acme/alice');
      const globex = await postJson(url, '/payments', { amount: 10 }, 'shared-key', 'globex/alice');
      expect(globex.headers['idempotent-replayed']).toBeUndefined();
      expect((acme.json() as { tenant: string }).tenant).toBe('acme');
      expect((globex.json() as { tenant: string }).tenant).toBe('globex');
      const again = await postJson(url, '/payments', { amount: 10 }, 'shared-key', 'globex/alice');
      expect((again.json() as { id: string }).id).toBe((globex.json() as { id: string }).id);
    });
    expect(ledger.charges.map((charge) => charge.tenant)).toEqual(['acme', 'globex']);
    expect(store.size).toBe(2);
  });

  it('text, binary, non-canonical JSON and empty bodies replay byte for byte', async () => {
    const binary = new Uint8Array(randomBytes(4096));
    const pretty = '{\n  "big": 12345678901234567890,\n  "a": 1.0\n}';
    const bodies: Record<string, RouteSpec['handle']> = {
      '/text': async () => ({ status: 200, body: { kind: 'text', text: '\ufeffhé ✓ line\r\n', contentType: 'text/plain; charset=utf-8' } }),
      '/binary': async () => ({ status: 200, body: { kind: 'bytes', bytes: binary, contentType: 'application/octet-stream' } }),
      '/pretty': async () => ({ status: 200, body: { kind: 'text', text: pretty, contentType: 'application/json' } }),
      '/latin1': async () => ({ status: 200, body: { kind: 'bytes', bytes: Uint8Array.of(0x63, 0x61, 0x66, 0xe9), contentType: 'text/plain; charset=latin1' } }),
      '/empty': async () => ({ status: 204, body: { kind: 'empty' } }),
    };
    const routes: RouteSpec[] = Object.entries(bodies).map(([path, handle]) => ({
      method: 'POST',
      path,
      options: { operation: `bodies${path.replace('/', '.')}.v1` },
      handle,
    }));
    const store = memoryStore();
    await withServer(binding, createIdempotency({ store }), routes, async (url) => {
      for (const path of Object.keys(bodies)) {
        const first = await postJson(url, path, {}, `key${path}`);
        const replay = await postJson(url, path, {}, `key${path}`);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.status).toBe(first.status);
        expect(replay.headers['content-type']).toBe(first.headers['content-type']);
        expect(replay.body.equals(first.body)).toBe(true);
      }
    });
    const stored = async (path: string) =>
      (await store.get({ tenant: 'acme', principal: 'alice', operation: `bodies${path.replace('/', '.')}.v1`, key: `key${path}` }))?.response
        ?.body as { encoding: string } | undefined;
    expect((await stored('/text'))?.encoding).toBe('text');
    expect((await stored('/binary'))?.encoding).toBe('base64');
    expect((await stored('/pretty'))?.encoding).toBe('text');
    expect((await stored('/latin1'))?.encoding).toBe('base64');
    expect(await stored('/empty')).toBeUndefined();
  });
});
