import { Readable } from 'node:stream';
import type { Idempotency, IdempotencyStore } from '@oncely/core';
import express, { type Request as ExpressRequest, type Response as ExpressResponse } from 'express';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { type Context, Hono } from 'hono';
import { expressIdempotency, expressIdempotencyContext, expressKeyLookup } from '../../src/express.js';
import { fastifyIdempotency, fastifyIdempotencyContext, fastifyKeyLookup } from '../../src/fastify.js';
import { honoIdempotency, honoIdempotencyContext, honoKeyLookup } from '../../src/hono.js';
import {
  type CallerScope,
  type IdempotencyContext,
  type IdempotencyHttpOptions,
  idempotencyKeyLookup,
  type ValidationResult,
  withIdempotency,
} from '../../src/index.js';
import { serveFetch } from './fetch-bridge.js';
import { listen, serveNodeFetch, type TestServer } from './listen.js';

/** A response described once and written by each binding in its own idiom. */
export type NeutralBody =
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'text'; readonly text: string; readonly contentType: string }
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array; readonly contentType: string }
  | { readonly kind: 'event-stream' }
  | { readonly kind: 'empty' };

export interface NeutralResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string | string[]>>;
  readonly body: NeutralBody;
}

/** What a neutral handler receives. */
export interface HandlerInput {
  readonly body: unknown;
  readonly caller: CallerScope;
  readonly context: IdempotencyContext;
}

/** Route options without the parts typed by the framework's request. */
export type RouteOptions = Omit<IdempotencyHttpOptions<unknown>, 'engine' | 'scope' | 'validate' | 'operation'> & {
  readonly operation: string;
  readonly validate?: (body: unknown) => ValidationResult | undefined;
  readonly engine?: Idempotency<IdempotencyStore>;
};

export interface RouteSpec {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly options: RouteOptions;
  handle(input: HandlerInput): Promise<NeutralResponse>;
}

/** The lookup endpoint a test server mounts at `GET /idempotency-keys/:key`. */
export interface LookupSpec {
  readonly operations: readonly string[];
}

/** One HTTP binding under test. */
export interface Binding {
  readonly name: 'fetch' | 'express' | 'fastify' | 'hono';
  serve(engine: Idempotency<IdempotencyStore>, routes: readonly RouteSpec[], lookup?: LookupSpec): Promise<TestServer>;
}

const LOOKUP_PREFIX = '/idempotency-keys/';

/** The authenticated identity: `Authorization: Bearer tenant/principal` (a stand-in for real auth). */
export function callerFrom(authorization: string | undefined): CallerScope {
  const [tenant = '', principal = ''] = (authorization ?? '').replace(/^Bearer /, '').split('/');
  return { tenant: tenant || 'anonymous', principal };
}

const sse = 'data: tick\n\n';

function optionsFor<Req>(
  engine: Idempotency<IdempotencyStore>,
  route: RouteSpec,
  authorization: (request: Req) => string | undefined,
): IdempotencyHttpOptions<Req> {
  const { validate, ...rest } = route.options;
  return {
    engine,
    ...rest,
    scope: (request) => callerFrom(authorization(request)),
    ...(validate ? { validate: (_request: Req, body: unknown) => validate(body) } : {}),
  };
}

/** Form fields by name, a repeated name as an array. */
function formFields(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of new URLSearchParams(text)) {
    const existing = fields[name];
    fields[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  return fields;
}

async function fetchBody(request: Request): Promise<unknown> {
  const type = request.headers.get('content-type') ?? '';
  if (request.body === null) return undefined;
  if (type.includes('json')) return request.json();
  if (type.startsWith('application/x-www-form-urlencoded')) return formFields(await request.text());
  if (type.startsWith('text/')) return request.text();
  return new Uint8Array(await request.arrayBuffer());
}

function toFetchResponse(response: NeutralResponse): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers ?? {})) {
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const { body } = response;
  switch (body.kind) {
    case 'json':
      headers.set('content-type', 'application/json');
      return new Response(JSON.stringify(body.value), { status: response.status, headers });
    case 'text':
      headers.set('content-type', body.contentType);
      return new Response(body.text, { status: response.status, headers });
    case 'bytes':
      headers.set('content-type', body.contentType);
      return new Response(body.bytes as Uint8Array<ArrayBuffer>, { status: response.status, headers });
    case 'event-stream':
      headers.set('content-type', 'text/event-stream');
      return new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(sse));
          },
        }),
        { status: response.status, headers },
      );
    case 'empty':
      return new Response(null, { status: response.status, headers });
  }
}

const fetchBinding: Binding = {
  name: 'fetch',
  serve(engine, routes, lookup) {
    const keyLookup = lookup
      ? idempotencyKeyLookup({ engine, operations: lookup.operations, scope: (request) => callerFrom(request.headers.get('authorization') ?? undefined) })
      : undefined;
    const handlers = new Map<string, (request: Request) => Promise<Response>>(
      routes.map((route) => {
        const handler = withIdempotency(
          async (request, context) => {
            const caller = callerFrom(request.headers.get('authorization') ?? undefined);
            return toFetchResponse(await route.handle({ body: await fetchBody(request), caller, context }));
          },
          optionsFor<Request>(engine, route, (request) => request.headers.get('authorization') ?? undefined),
        );
        return [`${route.method} ${route.path}`, handler] as const;
      }),
    );
    return serveFetch(async (request) => {
      const { pathname } = new URL(request.url);
      if (keyLookup && request.method === 'GET' && pathname.startsWith(LOOKUP_PREFIX)) {
        return keyLookup(request, decodeURIComponent(pathname.slice(LOOKUP_PREFIX.length)));
      }
      const handler = handlers.get(`${request.method} ${new URL(request.url).pathname}`);
      return handler ? handler(request) : new Response('not found', { status: 404 });
    });
  },
};

function writeExpress(res: ExpressResponse, response: NeutralResponse): void {
  res.status(response.status);
  for (const [name, value] of Object.entries(response.headers ?? {})) res.setHeader(name, value);
  const { body } = response;
  switch (body.kind) {
    case 'json':
      res.json(body.value);
      return;
    case 'text':
      res.type(body.contentType).send(body.text);
      return;
    case 'bytes':
      res.type(body.contentType).send(Buffer.from(body.bytes));
      return;
    case 'event-stream':
      res.setHeader('content-type', 'text/event-stream');
      res.write(sse);
      return;
    case 'empty':
      res.end();
      return;
  }
}

const expressBinding: Binding = {
  name: 'express',
  serve(engine, routes, lookup) {
    const app = express();
    if (lookup) {
      app.get(`${LOOKUP_PREFIX}:key`, expressKeyLookup({ engine, operations: lookup.operations, scope: (req) => callerFrom(req.headers.authorization) }));
    }
    for (const route of routes) {
      const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
      // No body parser: expressIdempotency reads JSON, form fields, text and bytes itself.
      app[method](
        route.path,
        expressIdempotency(
          optionsFor<ExpressRequest>(engine, route, (req) => req.headers.authorization),
        ),
        async (req: ExpressRequest, res: ExpressResponse) => {
          const caller = callerFrom(req.headers.authorization);
          writeExpress(res, await route.handle({ body: req.body, caller, context: expressIdempotencyContext(req) }));
        },
      );
    }
    return listen(app.listen(0, '127.0.0.1'));
  },
};

function sendFastify(reply: FastifyReply, response: NeutralResponse): FastifyReply {
  reply.code(response.status);
  for (const [name, value] of Object.entries(response.headers ?? {})) reply.header(name, value);
  const { body } = response;
  switch (body.kind) {
    case 'json':
      return reply.send(body.value);
    case 'text':
      return reply.type(body.contentType).send(body.text);
    case 'bytes':
      return reply.type(body.contentType).send(Buffer.from(body.bytes));
    case 'event-stream':
      return reply.type('text/event-stream').send(Readable.from((async function* () {
        yield sse;
        await new Promise(() => undefined);
      })()));
    case 'empty':
      return reply.send();
  }
}

const fastifyBinding: Binding = {
  name: 'fastify',
  async serve(engine, routes, lookup) {
    // Fastify's default maxParamLength (100) would answer 414 for long keys before the lookup sees them.
    // forceCloseConnections: close() must not wait on a socket a test client abandoned.
    const app = Fastify({ routerOptions: { maxParamLength: 1_000 }, forceCloseConnections: true });
    if (lookup) {
      app.get(`${LOOKUP_PREFIX}:key`, fastifyKeyLookup({ engine, operations: lookup.operations, scope: (request) => callerFrom(request.headers.authorization) }));
    }
    app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    // What @fastify/formbody does: fields by name, a repeated name as an array.
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
      done(null, formFields(body as string)),
    );
    await app.register(fastifyIdempotency, {
      engine,
      scope: (request: FastifyRequest) => callerFrom(request.headers.authorization),
    });
    for (const route of routes) {
      const options = optionsFor<FastifyRequest>(engine, route, (request) => request.headers.authorization);
      app.route({
        method: route.method,
        url: route.path,
        config: { idempotency: options },
        handler: async (request, reply) => {
          const caller = callerFrom(request.headers.authorization);
          return sendFastify(reply, await route.handle({ body: request.body, caller, context: fastifyIdempotencyContext(request) }));
        },
      });
    }
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address() as { port: number };
    return { url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
  },
};

async function honoBody(c: Context): Promise<unknown> {
  const type = c.req.header('content-type') ?? '';
  if (c.req.raw.body === null) return undefined;
  if (type.includes('json')) return c.req.json();
  if (type.startsWith('application/x-www-form-urlencoded')) return formFields(await c.req.text());
  if (type.startsWith('text/')) return c.req.text();
  return new Uint8Array(await c.req.arrayBuffer());
}

const honoBinding: Binding = {
  name: 'hono',
  serve(engine, routes, lookup) {
    const app = new Hono();
    if (lookup) {
      app.get(`${LOOKUP_PREFIX}:key`, honoKeyLookup({ engine, operations: lookup.operations, scope: (c) => callerFrom(c.req.header('authorization')) }));
    }
    for (const route of routes) {
      app.on(
        route.method,
        route.path,
        honoIdempotency(optionsFor<Context>(engine, route, (c) => c.req.header('authorization'))),
        async (c) => {
          const caller = callerFrom(c.req.header('authorization'));
          return toFetchResponse(await route.handle({ body: await honoBody(c), caller, context: honoIdempotencyContext(c) }));
        },
      );
    }
    return serveNodeFetch(app.fetch);
  },
};

/** Every binding: each behaviour test runs through all four over real HTTP. */
export const bindings: readonly Binding[] = [fetchBinding, expressBinding, fastifyBinding, honoBinding];

/** Starts a server, runs `body`, always closes the server. */
export async function withServer<T>(
  binding: Binding,
  engine: Idempotency<IdempotencyStore>,
  routes: readonly RouteSpec[],
  body: (url: string) => Promise<T>,
  lookup?: LookupSpec,
): Promise<T> {
  const server = await binding.serve(engine, routes, lookup);
  try {
    return await body(server.url);
  } finally {
    await server.close();
  }
}
