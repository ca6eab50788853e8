import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { withIdempotency } from '@oncely/http';
import { type Context, Hono } from 'hono';
import { createPayment, OPERATION, type PaymentInput, ROUTES, STORES, tenantOf } from '../bench-engines.js';
import { type BuildBinding, closeServer, fromResponse } from './bench-server.js';

const payment = async (c: Context) => c.json(createPayment(await c.req.json<PaymentInput>()), 201);

/** Hono 4 on `@hono/node-server`. */
export const buildHono: BuildBinding = async (engines) => {
  const app = new Hono();
  app.post(ROUTES.plain, payment);
  for (const store of STORES) {
    const wrapped = withIdempotency(async (request) => Response.json(createPayment((await request.json()) as PaymentInput), { status: 201 }), {
      engine: engines[store],
      operation: OPERATION,
      scope: (request) => tenantOf(request.headers.get('x-tenant')),
    });
    app.post(ROUTES[store], (c) => wrapped(c.req.raw));
  }
  return {
    async listen(port) {
      const server = await new Promise<Server>((resolve) => {
        const started = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => resolve(started as Server));
      });
      return { close: () => closeServer(server) };
    },
    async inject({ path, headers, body }) {
      return fromResponse(await app.request(path, { method: 'POST', headers, body }));
    },
  };
};
