import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from '../service/problem.js';
import { type ArmedFaults, checkArmRequest } from './armed-faults.js';
import { FAULT_HEADER, parseFaultHeader } from './fault-header.js';

/** Route hook: reads `Oncely-Fault`; refuses it unless the service runs with `--faults`. */
export function faultHeaderHook(enabled: boolean) {
  return async function readFault(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const header = request.headers[FAULT_HEADER];
    if (header === undefined) return undefined;
    if (!enabled) return sendProblem(reply, 'fault-injection-disabled', 400, 'Start the service with --faults to use Oncely-Fault.');
    const check = parseFaultHeader(header);
    if (check.kind === 'invalid') return sendProblem(reply, 'invalid-fault', 400, check.detail);
    request.demo.fault = check.fault;
    return undefined;
  };
}

/** `POST /v1/faults`: arms a crash in the relay or the consumer, or a card-network outage (`--faults` only). */
export function registerFaultRoutes(app: FastifyInstance, options: { readonly enabled: boolean; readonly faults: ArmedFaults }): void {
  app.post('/v1/faults', async (request, reply) => {
    if (!options.enabled) {
      return sendProblem(reply, 'fault-injection-disabled', 400, 'Start the service with --faults to arm faults.');
    }
    const check = checkArmRequest(request.body);
    if (check.kind === 'invalid') return sendProblem(reply, 'invalid-fault', 400, check.detail);
    options.faults.arm(check.request);
    return reply.code(202).send({ armed: check.request.point });
  });
}
