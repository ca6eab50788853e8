import { fastifyIdempotency } from '@oncely/http/fastify';
import Fastify, { type FastifyRequest } from 'fastify';
import { createPayment, FLOORS, OPERATION, type PaymentInput, ROUTES, STORES, tenantOf } from '../bench-engines.js';
import type { BuildBinding } from './bench-server.js';

const payment = async (request: FastifyRequest) => createPayment(request.body as PaymentInput);

/** Fastify 5 with its own JSON parser; the idempotent routes carry `config.idempotency`. */
export const buildFastify: BuildBinding = async (engines, floors) => {
  const app = Fastify({ forceCloseConnections: true });
  await app.register(fastifyIdempotency, { engine: engines.memory, scope: (request) => tenantOf(request.headers['x-tenant']) });
  app.post(ROUTES.plain, async (request, reply) => reply.code(201).send(await payment(request)));
  for (const floor of FLOORS) {
    app.post(ROUTES[`floor-${floor}`], async (request, reply) => {
      const answer = await floors[floor].serve(String(request.headers['idempotency-key']), request.body, () => createPayment(request.body as PaymentInput));
      return reply.code(answer.status).send(answer.body);
    });
  }
  for (const store of STORES) {
    app.post(ROUTES[store], { config: { idempotency: { engine: engines[store], operation: OPERATION } } }, async (request, reply) =>
      reply.code(201).send(await payment(request)),
    );
  }
  await app.ready();
  return {
    async listen(port) {
      await app.listen({ port, host: '127.0.0.1' });
      return { close: () => app.close() };
    },
    async inject({ path, headers, body }) {
      const response = await app.inject({ method: 'POST', url: path, headers, payload: body });
      return { status: response.statusCode, replayed: response.headers['idempotent-replayed'] === 'true', body: response.payload };
    },
  };
};
