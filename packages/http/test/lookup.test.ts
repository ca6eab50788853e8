import { createIdempotency, memoryStore } from '@oncely/core';
import { describe, expect, it } from 'vitest';
import type { KeyLookupBody } from '../src/index.js';
import { bindings, withServer } from './support/bindings.js';
import { deferred, expectProblem, failingStore, newLedger, paymentRoute } from './support/payments.js';
import { postJson, send } from './support/send.js';

const lookup = { operations: ['payments.create.v1', 'refunds.create.v1'] };
const resourceId = ({ headers }: { headers: Readonly<Record<string, string | readonly string[]>> }) =>
  typeof headers.location === 'string' ? headers.location.split('/').pop() : undefined;

const get = (url: string, key: string, identity: string) =>
  send(url, `/idempotency-keys/${encodeURIComponent(key)}`, { method: 'GET', headers: { authorization: `Bearer ${identity}` } });

describe.each(bindings)('$name: GET /idempotency-keys/:key', (binding) => {
  it("reports the caller's own record: state, stored status and resource id; another tenant or principal sees 404", async () => {
    const ledger = newLedger();
    await withServer(
      binding,
      createIdempotency({ store: memoryStore() }),
      [paymentRoute(ledger, { resourceId })],
      async (url) => {
        await postJson(url, '/payments', { amount: 10 }, 'key-1', 'acme/alice');
        const found = await get(url, 'key-1', 'acme/alice');
        expect(found.status).toBe(200);
        expect(found.headers['cache-control']).toBe('no-store');
        const body = found.json() as KeyLookupBody;
        expect(body.key).toBe('key-1');
        expect(body.records).toEqual([
          {
            operation: 'payments.create.v1',
            state: 'succeeded',
            createdAt: expect.any(String),
            expiresAt: expect.any(String),
            response: { status: 201, resourceId: 'pay_1' },
          },
        ]);
        expectProblem(await get(url, 'key-1', 'globex/alice'), 'idempotency-key-not-found', 404);
        expectProblem(await get(url, 'key-1', 'acme/bob'), 'idempotency-key-not-found', 404);
        expectProblem(await get(url, 'never-used', 'acme/alice'), 'idempotency-key-not-found', 404);
      },
      lookup,
    );
  });

  it('reports an operation still in progress with the seconds until its lease lapses', async () => {
    const gate = deferred();
    const store = memoryStore();
    await withServer(
      binding,
      createIdempotency({ store, leaseMs: 10_000 }),
      [paymentRoute(newLedger(), {}, gate.promise)],
      async (url) => {
        const first = postJson(url, '/payments', { amount: 10 }, 'key-1');
        let body: KeyLookupBody | undefined;
        while (!body) {
          const response = await get(url, 'key-1', 'acme/alice');
          if (response.status === 200) body = response.json() as KeyLookupBody;
        }
        expect(body.records[0]).toMatchObject({ state: 'in_progress', retryAfterSeconds: expect.any(Number) });
        expect(body.records[0]!.retryAfterSeconds).toBeLessThanOrEqual(10);
        gate.resolve();
        await first;
        expect(((await get(url, 'key-1', 'acme/alice')).json() as KeyLookupBody).records[0]!.state).toBe('succeeded');
      },
      lookup,
    );
  });

  it('a malformed key is 400 and an unreachable store 503, both problem+json', async () => {
    await withServer(binding, createIdempotency({ store: memoryStore() }), [], async (url) => {
      expectProblem(await get(url, 'k'.repeat(256), 'acme/alice'), 'invalid-idempotency-key', 400);
    }, lookup);
    const broken = createIdempotency({ store: failingStore(memoryStore(), { get: true }) });
    await withServer(binding, broken, [], async (url) => {
      expectProblem(await get(url, 'key-1', 'acme/alice'), 'storage-unavailable', 503);
    }, lookup);
  });
});
