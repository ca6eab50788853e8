import { createIdempotency, memoryStore } from '@oncely/core';
import fc from 'fast-check';
import { type Context, Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headersRecord } from '../../src/fetch/to-response.js';
import { unreadBody, unreadHeaders } from '../../src/fetch/unread-body.js';
import { withIdempotency } from '../../src/fetch/with-idempotency.js';
import { honoIdempotency } from '../../src/hono.js';
import { serveNodeFetch, type TestServer } from '../support/listen.js';

const UndiciResponse = globalThis.Response;
const UndiciRequest = globalThis.Request;
/** Still @hono/node-server's own object: nothing turned it into an undici Response. */
const unconverted = (response: Response) => Object.getOwnPropertySymbols(response).some((symbol) => symbol.description === 'cache');

describe('unreadBody', () => {
  let server: TestServer;
  // What the outermost middleware saw as the handler's response after honoIdempotency ran.
  const seen: Response[] = [];
  const handed: Response[] = [];

  beforeAll(async () => {
    const app = new Hono();
    app.use(async (c, next) => {
      await next();
      seen.push(c.res);
    });
    const idempotency = honoIdempotency({ engine: createIdempotency({ store: memoryStore() }), operation: 'payments.create.v1', scope: () => ({ tenant: 't' }) });
    const answer = (c: Context) => {
      const kind = c.req.query('kind');
      const response =
        kind === 'bytes'
          ? c.body(new Uint8Array([0, 1, 2, 255]), 201, { 'content-type': 'application/octet-stream', 'x-kind': 'bytes' })
          : kind === 'text'
            ? c.text('paid', 201)
            : c.json({ id: 'pay_1', amount: 1000 }, 201, { 'x-kind': 'json' });
      handed.push(response);
      return response;
    };
    app.post('/payments', idempotency, answer);
    // serveNodeFetch installs @hono/node-server's Request and Response globals, as a Hono app on Node runs.
    server = await serveNodeFetch(app.fetch);
  });
  afterAll(() => server.close());

  it('sends the handler its own unconverted response first and the same status, headers and bytes on replay', async () => {
    for (const [kind, type] of [
      ['json', 'application/json'],
      ['text', 'text/plain; charset=UTF-8'],
      ['bytes', 'application/octet-stream'],
    ] as const) {
      const post = () => fetch(`${server.url}/payments?kind=${kind}`, { method: 'POST', headers: { 'idempotency-key': `"k-${kind}"` } });
      const first = await post();
      const firstBytes = new Uint8Array(await first.arrayBuffer());
      expect(seen.at(-1)).toBe(handed.at(-1));
      expect(unconverted(seen.at(-1)!)).toBe(true);
      const retry = await post();
      expect([first.status, retry.status, retry.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
      expect(first.headers.get('content-type')).toBe(type);
      expect(retry.headers.get('content-type')).toBe(type);
      expect(new Uint8Array(await retry.arrayBuffer())).toEqual(firstBytes);
    }
  });

  it('reads any string or byte body a lightweight Response holds, and leaves every other Response to be read the standard way', async () => {
    expect(globalThis.Response).not.toBe(UndiciResponse);
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.uint8Array()), async (body) => {
        const response = new Response(body, { status: 201 });
        const expected = typeof body === 'string' ? new TextEncoder().encode(body) : body;
        expect(unreadBody(response)).toEqual(expected);
        // Reading it did not consume it: the response still streams the same bytes.
        expect(new Uint8Array(await response.arrayBuffer())).toEqual(expected);
        const undici = new UndiciResponse(body);
        expect(unreadBody(undici)).toEqual(expected);
        expect(new Uint8Array(await undici.arrayBuffer())).toEqual(expected);
        expect(unreadBody(undici)).toBeUndefined();
      }),
      { numRuns: 50 },
    );
    expect(unreadBody(new Response(null, { status: 204 }))).toEqual(new Uint8Array(0));
    expect(unreadBody(new Response(new Blob(['x'])))).toBeUndefined();
    expect(unreadBody(new Response(new ReadableStream()))).toBeUndefined();
    expect(unreadBody(new UndiciResponse(null, { status: 204 }))).toEqual(new Uint8Array(0));
    expect(unreadBody(new UndiciResponse(new Blob(['x'])))).toBeUndefined();
    expect(unreadBody(new UndiciResponse(new ReadableStream()))).toBeUndefined();
    const locked = new UndiciResponse('x');
    locked.body!.getReader();
    expect(unreadBody(locked)).toBeUndefined();
    // Cancelled, or read from and released: unlocked, but its bytes are not all there to send.
    const cancelled = new UndiciResponse('x');
    await cancelled.body!.cancel();
    expect([cancelled.body!.locked, unreadBody(cancelled)]).toEqual([false, undefined]);
    const released = new UndiciResponse('xy');
    const reader = released.body!.getReader();
    await reader.read();
    reader.releaseLock();
    expect([released.body!.locked, unreadBody(released)]).toEqual([false, undefined]);
    // A copy, also of the Buffer a lightweight Response holds as given (a Buffer's slice() is a view): later writes stay out.
    const buffer = Buffer.from('paid');
    const taken = unreadBody(new Response(buffer))!;
    buffer.fill(0);
    expect(new TextDecoder().decode(taken)).toBe('paid');
  });

  it('lets withIdempotency send an undici handler response on as it is, and copy it when a header is added to immutable headers', async () => {
    const engine = createIdempotency({ store: memoryStore() });
    const scope = () => ({ tenant: 't' });
    const handed: Response[] = [];
    const json = withIdempotency(
      async () => {
        handed.push(UndiciResponse.json({ id: 'pay_1' }, { status: 201 }));
        return handed.at(-1)!;
      },
      { engine, operation: 'payments.create.v1', scope },
    );
    const redirect = withIdempotency(async () => UndiciResponse.redirect('http://127.0.0.1/payments/pay_1', 303), {
      engine,
      operation: 'payments.redirect.v1',
      scope,
      profile: 'stripe',
    });
    const post = (key: string) =>
      new UndiciRequest('http://127.0.0.1/payments', { method: 'POST', headers: { 'idempotency-key': `"${key}"` } });
    const first = await json(post('a'));
    expect(first).toBe(handed[0]);
    const retry = await json(post('a'));
    expect([retry.status, retry.headers.get('idempotent-replayed'), await retry.text()]).toEqual([201, 'true', await first.text()]);
    const moved = await redirect(post('b'));
    expect([moved.status, moved.headers.get('location'), moved.headers.get('idempotency-key')]).toEqual([303, 'http://127.0.0.1/payments/pay_1', 'b']);
  });

  it('reads the headers a lightweight Response holds as a record as Headers would report them, and leaves the response unconverted', async () => {
    expect(globalThis.Response).not.toBe(UndiciResponse);
    const name = fc.constantFrom('Content-Type', 'content-type', 'X-Kind', 'x-kind', 'Set-Cookie', 'location', 'ETag');
    const value = fc.oneof(fc.constantFrom('application/json', 'a=1; Path=/', ' padded ', 'W/"1"'), fc.stringMatching(/^[ -~]{0,12}$/));
    await fc.assert(
      fc.property(fc.dictionary(name, value, { maxKeys: 4 }), fc.option(fc.constant('paid'), { nil: null }), (record, body) => {
        const response = new Response(body, { status: 201, headers: record });
        const read = unreadHeaders(response);
        expect(unconverted(response)).toBe(true);
        // What the same response reports once its Headers is built, when the record is one it reads the same way.
        if (read !== undefined) expect(read).toEqual(headersRecord(new Response(body, { status: 201, headers: record }).headers));
      }),
      { numRuns: 200 },
    );
    expect(unreadHeaders(new Response('x'))).toEqual(headersRecord(new Response('x').headers));
    expect(unreadHeaders(new Response(null, { status: 204 }))).toEqual({});
    expect(unreadHeaders(new Response('x', { headers: new Headers({ a: '1' }) }))).toBeUndefined();
    expect(unreadHeaders(new Response('x', { headers: { A: '1', a: '2' } }))).toBeUndefined();
    expect(unreadHeaders(new UndiciResponse('x', { headers: { a: '1' } }))).toBeUndefined();
  });
});
