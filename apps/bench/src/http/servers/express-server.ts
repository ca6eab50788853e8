import { once } from 'node:events';
import { expressIdempotency } from '@oncely/http/express';
import express, { type Request, type Response } from 'express';
import { createPayment, OPERATION, ROUTES, STORES, tenantOf } from '../bench-engines.js';
import type { ServeBinding } from './bench-server.js';

const payment = (req: Request, res: Response) => {
  res.status(201).json(createPayment(req.body));
};

/** Express 5 with `express.json()`; the idempotent routes add `expressIdempotency` before the handler. */
export const serveExpress: ServeBinding = async (engines, port) => {
  const app = express();
  const scope = (req: Request) => tenantOf(req.headers['x-tenant']);
  app.post(ROUTES.plain, express.json(), payment);
  for (const store of STORES) {
    app.post(ROUTES[store], express.json(), expressIdempotency({ engine: engines[store], operation: OPERATION, scope }), payment);
  }
  const server = app.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
