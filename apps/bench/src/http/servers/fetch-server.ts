import { once } from 'node:events';
import { createServer } from 'node:http';
import { withIdempotency } from '@oncely/http';
import { createPayment, FLOORS, OPERATION, type PaymentInput, ROUTES, STORES, tenantOf } from '../bench-engines.js';
import type { StoreFloor } from '../store-floor.js';
import { type BuildBinding, closeServer, fromResponse } from './bench-server.js';
import { type FetchHandler, fetchRoutes } from './node-fetch-adapter.js';

const payment: FetchHandler = async (request) => Response.json(createPayment((await request.json()) as PaymentInput), { status: 201 });

/** The bare route plus only the store's raw work. */
const floorRoute =
  (floor: StoreFloor): FetchHandler =>
  async (request) => {
    const body = (await request.json()) as PaymentInput;
    const answer = await floor.serve(request.headers.get('idempotency-key') ?? '', body, () => createPayment(body));
    return Response.json(answer.body, { status: answer.status });
  };

/** `withIdempotency` around a fetch handler, served from `node:http` through a small fetch adapter. */
export const buildFetch: BuildBinding = async (engines, floors) => {
  const scope = (request: Request) => tenantOf(request.headers.get('x-tenant'));
  const routes = new Map<string, FetchHandler>([[ROUTES.plain, payment]]);
  for (const floor of FLOORS) routes.set(ROUTES[`floor-${floor}`], floorRoute(floors[floor]));
  for (const store of STORES) routes.set(ROUTES[store], withIdempotency(payment, { engine: engines[store], operation: OPERATION, scope }));
  return {
    async listen(port) {
      const server = createServer({ keepAlive: true }, fetchRoutes(routes));
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
      return { close: () => closeServer(server) };
    },
    async inject({ path, headers, body }) {
      const request = new Request(`http://127.0.0.1${path}`, { method: 'POST', headers, body });
      return fromResponse(await routes.get(path)!(request));
    },
  };
};
