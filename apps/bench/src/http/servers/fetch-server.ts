import { once } from 'node:events';
import { createServer } from 'node:http';
import { withIdempotency } from '@oncely/http';
import { createPayment, OPERATION, type PaymentInput, ROUTES, STORES, tenantOf } from '../bench-engines.js';
import type { ServeBinding } from './bench-server.js';
import { type FetchHandler, fetchRoutes } from './node-fetch-adapter.js';

const payment: FetchHandler = async (request) => Response.json(createPayment((await request.json()) as PaymentInput), { status: 201 });

/** `withIdempotency` around a fetch handler, served from `node:http` through a small fetch adapter. */
export const serveFetch: ServeBinding = async (engines, port) => {
  const scope = (request: Request) => tenantOf(request.headers.get('x-tenant'));
  const routes = new Map<string, FetchHandler>([[ROUTES.plain, payment]]);
  for (const store of STORES) routes.set(ROUTES[store], withIdempotency(payment, { engine: engines[store], operation: OPERATION, scope }));
  const server = createServer({ keepAlive: true }, fetchRoutes(routes));
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
