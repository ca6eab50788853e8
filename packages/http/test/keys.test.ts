import { createIdempotency, memoryStore } from '@oncely/core';
import { describe, expect, it } from 'vitest';
import { bindings, withServer } from './support/bindings.js';
import { expectProblem, newLedger, paymentRoute } from './support/payments.js';
import { postJson, send } from './support/send.js';

describe.each(bindings)('$name: the Idempotency-Key header', (binding) => {
  it('a POST without a key is refused with 400 problem+json, before any record or charge', async () => {
    const store = memoryStore();
    const ledger = newLedger();
    await withServer(binding, createIdempotency({ store }), [paymentRoute(ledger)], async (url) => {
      const response = await postJson(url, '/payments', { amount: 10 }, undefined);
      const problem = expectProblem(response, 'missing-idempotency-key', 400);
      expect(problem.detail).toContain('Idempotency-Key');
    });
    expect(store.size).toBe(0);
    expect(ledger.charges).toHaveLength(0);
  });

  it('required: false lets a keyless request run without a record; a PUT needs no key by default', async () => {
    const store = memoryStore();
    const ledger = newLedger();
    const optional = paymentRoute(ledger, { required: false });
    const put = { ...paymentRoute(ledger), method: 'PUT' as const, path: '/payments/p1' };
    await withServer(binding, createIdempotency({ store }), [optional, put], async (url) => {
      expect((await postJson(url, '/payments', { amount: 1 }, undefined)).status).toBe(201);
      expect((await postJson(url, '/payments', { amount: 1 }, undefined)).status).toBe(201);
      const response = await send(url, '/payments/p1', {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: 'Bearer acme/alice' },
        body: '{"amount":2}',
      });
      expect(response.status).toBe(201);
      expect(response.headers['idempotent-replayed']).toBeUndefined();
    });
    expect(ledger.charges).toHaveLength(3);
    expect(store.size).toBe(0);
  });

  it('the structured-field string "k" and the bare token k name the same key', async () => {
    const ledger = newLedger();
    await withServer(binding, createIdempotency({ store: memoryStore() }), [paymentRoute(ledger)], async (url) => {
      const quoted = await postJson(url, '/payments', { amount: 10 }, '"8e03978e-40d5-43e8-bc93-6894a57f9324"');
      expect(quoted.status).toBe(201);
      const bare = await postJson(url, '/payments', { amount: 10 }, '8e03978e-40d5-43e8-bc93-6894a57f9324');
      expect(bare.status).toBe(201);
      expect(bare.headers['idempotent-replayed']).toBe('true');
      expect(bare.json()).toEqual(quoted.json());
      const escaped = await postJson(url, '/payments', { amount: 10 }, '"a\\"b\\\\c"');
      expect(escaped.status).toBe(201);
      const same = await postJson(url, '/payments', { amount: 10 }, 'a"b\\c');
      expect(same.headers['idempotent-replayed']).toBe('true');
    });
    expect(ledger.charges).toHaveLength(2);
  });

  it('malformed keys are refused with 400 and leave no record: too long, control or non-ASCII characters, broken strings, two fields', async () => {
    const store = memoryStore();
    const ledger = newLedger();
    const malformed: (string | string[])[] = [
      'k'.repeat(256),
      `"${'k'.repeat(256)}"`,
      'tab\there',
      '"a b"',
      '"unterminated',
      '"a"; p=1',
      '"\\n"',
      'caf\u00e9',
      '""',
      ['first', 'second'],
    ];
    await withServer(binding, createIdempotency({ store }), [paymentRoute(ledger)], async (url) => {
      for (const key of malformed) {
        const response = await send(url, '/payments', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer acme/alice', 'idempotency-key': key },
          body: '{"amount":10}',
        });
        expectProblem(response, 'invalid-idempotency-key', 400);
      }
      const longest = await postJson(url, '/payments', { amount: 10 }, 'k'.repeat(255));
      expect(longest.status).toBe(201);
    });
    expect(store.size).toBe(1);
    expect(ledger.charges).toHaveLength(1);
  });

  it('two fields a proxy joined into one line (k1,k2 bare or quoted) are refused like two lines, with no record', async () => {
    const store = memoryStore();
    const ledger = newLedger();
    const joined: (string | string[])[] = ['k1,k2', 'k1, k2', 'k1 ,k2', '"k1","k2"', '"k1", "k2"', '"k1"\t,k2', ['k1', 'k2']];
    await withServer(binding, createIdempotency({ store }), [paymentRoute(ledger)], async (url) => {
      for (const key of joined) {
        const response = await send(url, '/payments', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer acme/alice', 'idempotency-key': key },
          body: '{"amount":10}',
        });
        const problem = expectProblem(response, 'invalid-idempotency-key', 400);
        expect(problem.detail).toContain('more than one Idempotency-Key');
      }
      expect(store.size).toBe(0);
      // One sf-string may hold a comma: it is a single field.
      expect((await postJson(url, '/payments', { amount: 10 }, '"a,b"')).status).toBe(201);
    });
    expect(ledger.charges).toHaveLength(1);
  });
});
