import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';

/** A server listening on a loopback port. */
export interface TestServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1, port 0 (the OS picks a free one). */
export function listen(server: Server): Promise<TestServer> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Serves a fetch handler through `@hono/node-server`, the adapter Hono apps run on in Node. */
export function serveNodeFetch(fetch: (request: Request) => Response | Promise<Response>): Promise<TestServer> {
  return new Promise((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            (server as Server).closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
