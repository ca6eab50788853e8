import { once } from 'node:events';
import { expressIdempotency } from '@oncely/http/express';
import express, { type Request, type Response } from 'express';
import inject from 'light-my-request';
import { createPayment, FLOORS, OPERATION, ROUTES, STORES, tenantOf } from '../bench-engines.js';
import { type BuildBinding, closeServer } from './bench-server.js';

const payment = (req: Request, res: Response) => {
  res.status(201).json(createPayment(req.body));
};

/** Express 5: the bare route parses with `express.json()`; the idempotent ones go through `expressIdempotency`. */
export const buildExpress: BuildBinding = async (engines, floors) => {
  const app = express();
  const scope = (req: Request) => tenantOf(req.headers['x-tenant']);
  app.post(ROUTES.plain, express.json(), payment);
  for (const floor of FLOORS) {
    app.post(ROUTES[`floor-${floor}`], express.json(), (req, res, next) => {
      floors[floor].serve(String(req.headers['idempotency-key']), req.body, () => createPayment(req.body)).then((answer) => {
        res.status(answer.status).json(answer.body);
      }, next);
    });
  }
  for (const store of STORES) {
    app.post(ROUTES[store], express.json(), expressIdempotency({ engine: engines[store], operation: OPERATION, scope }), payment);
  }
  return {
    async listen(port) {
      const server = app.listen(port, '127.0.0.1');
      await once(server, 'listening');
      return { close: () => closeServer(server) };
    },
    async inject({ path, headers, body }) {
      const response = await inject(app, { method: 'POST', url: path, headers, payload: body });
      return { status: response.statusCode, replayed: response.headers['idempotent-replayed'] === 'true', body: response.payload };
    },
  };
};
