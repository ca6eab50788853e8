import { Readable } from 'node:stream';
import { createIdempotency, isOncelyError, memoryStore } from '@oncely/core';
import express from 'express';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { expressIdempotency } from '../src/express.js';
import { fastifyIdempotency } from '../src/fastify.js';
import { withIdempotency } from '../src/index.js';
import { serveFetch } from './support/fetch-bridge.js';
import { listen, type TestServer } from './support/listen.js';
import { postJson, send } from './support/send.js';

const scope = (authorization: string | undefined) => ({ tenant: (authorization ?? '').replace('Bearer ', '').split('/')[0]! });

async function twice(server: TestServer, path = '/report'): Promise<[Awaited<ReturnType<typeof postJson>>, Awaited<ReturnType<typeof postJson>>]> {
  try {
    return [await postJson(server.url, path, {}, 'key-1'), await postJson(server.url, path, {}, 'key-1')];
  } finally {
    await server.close();
  }
}

describe('express capture', () => {
  it('res.write chunks, a status from writeHead and its headers are captured faithfully and replayed', async () => {
    let runs = 0;
    const app = express();
    app.post('/report', express.json(), expressIdempotency({ engine: createIdempotency({ store: memoryStore() }), operation: 'report.v1', scope: (req) => scope(req.headers.authorization) }), (_req, res) => {
      runs++;
      res.writeHead(201, 'Made', { 'content-type': 'text/csv; charset=utf-8', location: '/reports/1' });
      res.write('a,b\n');
      res.write(Buffer.from('1,2\n'));
      res.end('3,4\n');
    });
    const [first, replay] = await twice(await listen(app.listen(0, '127.0.0.1')));
    expect(first.status).toBe(201);
    expect(first.text).toBe('a,b\n1,2\n3,4\n');
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.location).toBe('/reports/1');
    expect(replay.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(runs).toBe(1);
  });

  it('holds its own copy of a buffer the handler reuses after end(), and of a string body as it was sent', async () => {
    const app = express();
    const engine = createIdempotency({ store: memoryStore() });
    app.post('/report', expressIdempotency({ engine, operation: 'report.v1', scope: (req) => scope(req.headers.authorization) }), (_req, res) => {
      const pooled = Buffer.from('a,b\n');
      res.status(201).type('text/csv').end(pooled);
      pooled.fill(0x2a); // a serializer's pooled buffer, reused as soon as it was handed over
    });
    app.post('/text', expressIdempotency({ engine, operation: 'text.v1', scope: (req) => scope(req.headers.authorization) }), (_req, res) => {
      res.status(201).type('text/plain').end('caf\u00e9 \ud800');
    });
    const [first, replay] = await twice(await listen(app.listen(0, '127.0.0.1')));
    expect([first.status, first.text, replay.text, replay.headers['idempotent-replayed']]).toEqual([201, 'a,b\n', 'a,b\n', 'true']);
    const [sent, again] = await twice(await listen(app.listen(0, '127.0.0.1')), '/text');
    expect([sent.text, again.text, again.headers['content-length']]).toEqual(['caf\u00e9 \ufffd', 'caf\u00e9 \ufffd', String(Buffer.byteLength('caf\u00e9 \ufffd'))]);
  });

  it('replays byte-identical whether res methods are inherited or own (patched before it, as on-headers and compression do), and gives them back', async () => {
    for (const patchedBefore of [false, true]) {
      const seen: { own: boolean; sameProto: boolean }[] = [];
      const app = express();
      app.post(
        '/report',
        (_req, res, next) => {
          if (patchedBefore) {
            // What on-headers and compression do: own wrappers over the inherited methods.
            const { writeHead, end } = res;
            res.writeHead = function (this: typeof res, ...args: Parameters<typeof writeHead>) {
              res.setHeader('x-on-headers', '1');
              return writeHead.apply(this, args);
            } as typeof writeHead;
            res.end = function (this: typeof res, ...args: Parameters<typeof end>) {
              return end.apply(this, args);
            } as typeof end;
          }
          const proto = Object.getPrototypeOf(res) as object;
          res.on('finish', () => seen.push({ own: Object.hasOwn(res, 'write') || Object.hasOwn(res, 'flushHeaders'), sameProto: Object.getPrototypeOf(res) === proto }));
          next();
        },
        express.json(),
        expressIdempotency({ engine: createIdempotency({ store: memoryStore() }), operation: 'report.v1', scope: (req) => scope(req.headers.authorization) }),
        (_req, res) => {
          res.status(201).set('x-report', 'r1').json({ id: `r_${Math.random()}`, rows: [1, 2, 3] });
        },
      );
      const [first, replay] = await twice(await listen(app.listen(0, '127.0.0.1')));
      expect(first.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(first.text);
      expect(first.headers['x-report']).toBe('r1');
      expect(first.headers['x-on-headers']).toBe(patchedBefore ? '1' : undefined);
      // After each response the capture's members are gone: nothing own was left behind, the prototype is Express's again.
      expect(seen).toHaveLength(2);
      expect(seen).toEqual([
        { own: false, sameProto: true },
        { own: false, sameProto: true },
      ]);
    }
  });

  it('answers the other routes of the app and of a mounted app as before once a capture has held a response, and nests', async () => {
    const engine = createIdempotency({ store: memoryStore() });
    const idempotency = (operation: string) => expressIdempotency({ engine, operation, scope: (req) => scope(req.headers.authorization) });
    let runs = 0;
    const app = express();
    const mounted = express();
    mounted.post('/report', express.json(), idempotency('mounted.v1'), (_req, res) => {
      runs++;
      res.status(201).json({ id: `m_${runs}` });
    });
    app.use('/mounted', mounted);
    app.post('/report', express.json(), idempotency('outer.v1'), idempotency('inner.v1'), (_req, res) => {
      runs++;
      res.status(201).json({ id: `r_${runs}` });
    });
    app.get('/plain', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('pl');
      res.end('ain');
    });
    const server = await listen(app.listen(0, '127.0.0.1'));
    try {
      const plain = () => send(server.url, '/plain', { method: 'GET' });
      expect((await plain()).text).toBe('plain');
      const [first, replay] = [await postJson(server.url, '/report', {}, 'k1'), await postJson(server.url, '/report', {}, 'k1')];
      expect([first.status, replay.status, replay.headers['idempotent-replayed'], replay.text]).toEqual([201, 201, 'true', first.text]);
      expect((await plain()).text).toBe('plain');
      const [inMounted, again] = [await postJson(server.url, '/mounted/report', {}, 'k1'), await postJson(server.url, '/mounted/report', {}, 'k1')];
      expect([inMounted.status, again.headers['idempotent-replayed'], again.text]).toEqual([201, 'true', inMounted.text]);
      expect((await plain()).text).toBe('plain');
      expect(runs).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('a piped stream is buffered whole and stored', async () => {
    const app = express();
    app.post('/report', express.json(), expressIdempotency({ engine: createIdempotency({ store: memoryStore() }), operation: 'report.v1', scope: (req) => scope(req.headers.authorization) }), (_req, res) => {
      res.type('text/plain');
      Readable.from(['x'.repeat(70_000), 'y'.repeat(70_000)]).pipe(res);
    });
    const [first, replay] = await twice(await listen(app.listen(0, '127.0.0.1')));
    expect(first.text.length).toBe(140_000);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
  });

  it('an error passed to next() reaches the error handler; its 500 releases the claim', async () => {
    const store = memoryStore();
    const app = express();
    app.post('/report', express.json(), expressIdempotency({ engine: createIdempotency({ store }), operation: 'report.v1', scope: (req) => scope(req.headers.authorization) }), (_req, _res, next) => {
      next(new Error('boom'));
    });
    app.use((_error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(500).json({ error: 'internal' });
    });
    const [first, second] = await twice(await listen(app.listen(0, '127.0.0.1')));
    expect(first.status).toBe(500);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(first.json()).toEqual({ error: 'internal' });
    expect(store.size).toBe(0);
  });
});

describe('fastify capture', () => {
  it('a reply sent as a Node stream is buffered whole and stored', async () => {
    const app = Fastify();
    await app.register(fastifyIdempotency, { engine: createIdempotency({ store: memoryStore() }), scope: (request) => scope(request.headers.authorization) });
    app.post('/report', { config: { idempotency: { operation: 'report.v1' } } }, async (_request, reply) =>
      reply.code(201).type('text/plain').send(Readable.from(['chunk-1;', 'chunk-2;'])),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    const [first, replay] = await twice({ url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`, close: () => app.close() });
    expect(first.text).toBe('chunk-1;chunk-2;');
    expect(replay.status).toBe(201);
    expect(replay.text).toBe('chunk-1;chunk-2;');
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('routes without idempotency config are untouched, and schema validation refuses before any record', async () => {
    const store = memoryStore();
    const app = Fastify();
    await app.register(fastifyIdempotency, { engine: createIdempotency({ store }), scope: (request) => scope(request.headers.authorization) });
    let plain = 0;
    app.post('/plain', async () => ({ n: ++plain }));
    app.post(
      '/validated',
      {
        config: { idempotency: { operation: 'validated.v1' } },
        schema: { body: { type: 'object', required: ['amount'], properties: { amount: { type: 'number', minimum: 1 } } } },
      },
      async () => ({ ok: true }),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    try {
      expect((await postJson(url, '/plain', {}, undefined)).json()).toEqual({ n: 1 });
      expect((await postJson(url, '/plain', {}, 'key-1')).json()).toEqual({ n: 2 });
      expect((await postJson(url, '/validated', { amount: 0 }, 'key-1')).status).toBe(400);
      expect(store.size).toBe(0);
      expect((await postJson(url, '/validated', { amount: 2 }, 'key-1')).status).toBe(200);
      expect(store.size).toBe(1);
    } finally {
      await app.close();
    }
  });
});

describe('fetch capture', () => {
  it('a Response built from a ReadableStream (not server-sent events) is read whole and stored', async () => {
    let runs = 0;
    const handler = withIdempotency(
      async () => {
        runs++;
        const parts = ['{"id":', '"r1"}'];
        const body = new ReadableStream({
          pull(controller) {
            const part = parts.shift();
            if (part === undefined) controller.close();
            else controller.enqueue(new TextEncoder().encode(part));
          },
        });
        return new Response(body, { status: 202, headers: { 'content-type': 'application/json', location: '/jobs/r1' } });
      },
      { engine: createIdempotency({ store: memoryStore() }), operation: 'report.v1', scope: (request) => scope(request.headers.get('authorization') ?? undefined) },
    );
    const [first, replay] = await twice(await serveFetch(handler));
    expect(first.json()).toEqual({ id: 'r1' });
    expect(replay.status).toBe(202);
    expect(replay.text).toBe('{"id":"r1"}');
    expect(replay.headers.location).toBe('/jobs/r1');
    expect(runs).toBe(1);
  });

  it('malformed JSON is refused with 400 problem+json before any record', async () => {
    const store = memoryStore();
    const server = await serveFetch(
      withIdempotency(async () => new Response('ok'), { engine: createIdempotency({ store }), operation: 'report.v1', scope: () => ({ tenant: 't' }) }),
    );
    try {
      const response = await send(server.url, '/report', { headers: { 'content-type': 'application/json', 'idempotency-key': 'k' }, body: '{"amount":' });
      expect(response.status).toBe(400);
      expect((response.json() as { type: string }).type).toBe('https://oncely.dev/problems/invalid-request-body');
      expect(store.size).toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe('setup checks', () => {
  it('transaction mode on a store without transactions fails when the route is created, not per request', () => {
    const engine = createIdempotency({ store: memoryStore() });
    let caught: unknown;
    try {
      withIdempotency(async () => new Response(), { engine, operation: 'x.v1', scope: () => ({ tenant: 't' }), mode: 'transaction' });
    } catch (error) {
      caught = error;
    }
    expect(isOncelyError(caught, 'capability_missing')).toBe(true);
  });

  it('an operation that is a URL, not a semantic name, fails at setup', () => {
    const engine = createIdempotency({ store: memoryStore() });
    expect(() => expressIdempotency({ engine, operation: '/v1/payments', scope: () => ({ tenant: 't' }) })).toThrow(/semantic name/);
  });
});
