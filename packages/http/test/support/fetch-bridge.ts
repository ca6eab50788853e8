import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen, type TestServer } from './listen.js';

/** Turns a Node request into a fetch Request (body buffered; aborted when the client goes away). */
async function toRequest(req: IncomingMessage, res: ServerResponse): Promise<Request> {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const headers = new Headers();
  for (let index = 0; index < req.rawHeaders.length; index += 2) headers.append(req.rawHeaders[index]!, req.rawHeaders[index + 1]!);
  const method = req.method ?? 'GET';
  const bodyless = method === 'GET' || method === 'HEAD' || body.length === 0;
  return new Request(`http://${req.headers.host}${req.url}`, {
    method,
    headers,
    body: bodyless ? null : body,
    signal: controller.signal,
  });
}

/** Writes a fetch Response to a Node response, set-cookie values kept apart. */
async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') res.setHeader(name, value);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** Serves a fetch-standard handler on a loopback port, as Node fetch adapters (Hono's, Remix's) do. */
export function serveFetch(handler: (request: Request) => Promise<Response>): Promise<TestServer> {
  const server = createServer((req, res) => {
    toRequest(req, res)
      .then(handler)
      .then((response) => writeResponse(response, res))
      .catch(() => {
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      });
  });
  return listen(server);
}
