import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { honoIdempotency } from '@oncely/http/hono';
import { type Context, Hono } from 'hono';
import { createPayment, FLOORS, OPERATION, type PaymentInput, ROUTES, STORES, tenantOf } from '../bench-engines.js';
import { type BuildBinding, closeServer, fromResponse } from './bench-server.js';

const payment = async (c: Context) => c.json(createPayment(await c.req.json<PaymentInput>()), 201);

/** Hono 4 on `@hono/node-server`; the idempotent routes put `honoIdempotency` before the handler. */
export const buildHono: BuildBinding = async (engines, floors) => {
  const app = new Hono();
  app.post(ROUTES.plain, payment);
  for (const floor of FLOORS) {
    app.post(ROUTES[`floor-${floor}`], async (c) => {
      const body = await c.req.json<PaymentInput>();
      const answer = await floors[floor].serve(c.req.header('idempotency-key') ?? '', body, () => createPayment(body));
      return c.json(answer.body as object, answer.status);
    });
  }
  for (const store of STORES) {
    app.post(ROUTES[store], honoIdempotency({ engine: engines[store], operation: OPERATION, scope: (c) => tenantOf(c.req.header('x-tenant')) }), payment);
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
