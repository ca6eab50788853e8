import { createIdempotency, memoryStore } from '@oncely/core';
import { describe, expect, it } from 'vitest';
import { withIdempotency } from '../../src/fetch/with-idempotency.js';

// Apart from the suites that serve through @hono/node-server, which puts its own Response in the global scope.
describe('a response withIdempotency rebuilds to add a header', () => {
  it('keeps the handler\'s headers: a string body adds no content type the handler removed', async () => {
    expect(Object.getOwnPropertySymbols(new Response('x')).some((symbol) => symbol.description === 'cache')).toBe(false);
    const handler = withIdempotency(
      async () => {
        const response = new Response('paid', { status: 201 });
        response.headers.delete('content-type');
        return response;
      },
      { engine: createIdempotency({ store: memoryStore() }), operation: 'payments.create.v1', scope: () => ({ tenant: 't' }), profile: 'stripe' },
    );
    const post = () => new Request('http://127.0.0.1/payments', { method: 'POST', headers: { 'idempotency-key': '"k"' } });
    const first = await handler(post());
    expect([first.status, first.headers.get('content-type'), first.headers.get('idempotency-key'), await first.text()]).toEqual([201, null, 'k', 'paid']);
    const retry = await handler(post());
    expect([retry.headers.get('idempotent-replayed'), retry.headers.get('content-type'), await retry.text()]).toEqual(['true', null, 'paid']);
  });
});
