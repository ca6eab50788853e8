import { request as httpRequest } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FAULT_HEADER } from '../faults/fault-header.js';
import { sendProblem } from '../service/problem.js';
import type { SupervisedService } from '../supervisor/service-process.js';

/** Request headers that describe one hop, not the request. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer']);

/**
 * Forwards `/v1/*` to the supervised service, bytes as they are. A connection the service drops (a
 * crash, a dropped response) is dropped for the client too, so the public URL fails exactly as the
 * service does. Fault injection passes only when the demo runs with `--faults`.
 */
export async function registerProxy(app: FastifyInstance, options: { readonly service: SupervisedService; readonly faults: boolean }) {
  await app.register(async (scope) => {
    // Bodies stay raw bytes: the service parses them, and fingerprints what the client sent.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.all('/v1/*', (request, reply) => forward(request, reply, options));
  });
}

async function forward(
  request: FastifyRequest,
  reply: FastifyReply,
  options: { readonly service: SupervisedService; readonly faults: boolean },
): Promise<void> {
  const faultRequest = request.headers[FAULT_HEADER] !== undefined || request.url.startsWith('/v1/faults');
  if (faultRequest && !options.faults) {
    await sendProblem(reply, 'fault-injection-disabled', 400, 'Start the demo with --faults (npm run demo -- --faults).');
    return;
  }
  const state = options.service.state;
  if (state.kind !== 'up') {
    // Nothing reached the service: a retry with the same key is safe.
    await sendProblem(reply.header('retry-after', '1'), 'service-restarting', 503, 'The payments service is restarting; retry shortly.');
    return;
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = value;
  }
  const body = request.body instanceof Buffer ? request.body : undefined;
  if (body) headers['content-length'] = String(body.length);
  reply.hijack();
  const target = new URL(request.url, state.url);
  const upstream = httpRequest(target, { method: request.method, headers, agent: false }, (incoming) => {
    const responseHeaders = Object.fromEntries(Object.entries(incoming.headers).filter(([name]) => !HOP_HEADERS.has(name)));
    reply.raw.writeHead(incoming.statusCode ?? 502, responseHeaders as Record<string, string | string[]>);
    incoming.pipe(reply.raw);
    incoming.on('error', () => reply.raw.destroy());
  });
  // The service closed without answering (killed, or a dropped response): so does the proxy.
  upstream.on('error', () => request.raw.socket.destroy());
  upstream.end(body);
}
