import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/** A fetch-standard handler, as `withIdempotency` wraps it. */
export type FetchHandler = (request: Request) => Promise<Response>;

async function toRequest(message: IncomingMessage): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of message) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (let i = 0; i < message.rawHeaders.length; i += 2) headers.append(message.rawHeaders[i]!, message.rawHeaders[i + 1]!);
  const method = message.method ?? 'GET';
  const body = method === 'GET' || method === 'HEAD' ? undefined : Buffer.concat(chunks);
  return new Request(`http://${message.headers.host ?? 'localhost'}${message.url ?? '/'}`, { method, headers, body });
}

async function send(response: Response, reply: ServerResponse): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  reply.writeHead(response.status, { ...headers, 'content-length': String(body.length) });
  reply.end(body);
}

/**
 * Serves fetch handlers from `node:http`, one per path. Both sides of every HTTP comparison go
 * through this same adapter, so its cost is in the baseline too.
 */
export function fetchRoutes(routes: ReadonlyMap<string, FetchHandler>): RequestListener {
  return (message, reply) => {
    const handler = routes.get((message.url ?? '/').split('?')[0]!);
    if (!handler) {
      reply.writeHead(404).end();
      return;
    }
    toRequest(message)
      .then(handler)
      .then((response) => send(response, reply))
      .catch((error: unknown) => {
        reply.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
      });
  };
}
