import type { FastifyReply } from 'fastify';

/** Problems the demo itself answers with (the idempotency contract's own come from @oncely/http). */
export type DemoProblem =
  | 'unauthenticated'
  | 'invalid-request'
  | 'account-not-found'
  | 'insufficient-funds'
  | 'card-network-unavailable'
  | 'fault-injection-disabled'
  | 'invalid-fault'
  | 'service-restarting'
  | 'scenario-running'
  | 'checkout-not-built';

const TITLES: Readonly<Record<DemoProblem, string>> = {
  unauthenticated: 'Authentication required',
  'invalid-request': 'The request is invalid',
  'account-not-found': 'No such account',
  'insufficient-funds': 'Insufficient funds',
  'card-network-unavailable': 'The card network is unavailable',
  'fault-injection-disabled': 'Fault injection is off',
  'invalid-fault': 'The fault is not one the service knows',
  'service-restarting': 'The payments service is restarting',
  'scenario-running': 'A scenario is already running',
  'checkout-not-built': 'The checkout page is not built',
};

/** Base of the demo's problem `type` URIs. */
const DEMO_PROBLEM_BASE = 'https://oncely.dev/demo/problems/';

/** The RFC 9457 body of a demo problem. */
function problemBody(code: DemoProblem, status: number, detail: string, members: Record<string, unknown> = {}) {
  return { ...members, type: `${DEMO_PROBLEM_BASE}${code}`, title: TITLES[code], status, detail };
}

/** Sends an `application/problem+json` answer. */
export function sendProblem(
  reply: FastifyReply,
  code: DemoProblem,
  status: number,
  detail: string,
  members: Record<string, unknown> = {},
): FastifyReply {
  return reply.code(status).type('application/problem+json').send(problemBody(code, status, detail, members));
}
