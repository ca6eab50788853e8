import { createServer } from 'node:net';

/** This package's private port range for extra redis-server processes (the shared one is 6379). */
const FIRST = 7000;
const LAST = 7099;
const taken = new Set<number>();

const canBind = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/** A port of the private range that is free, and whose cluster bus port (+10000) is free too. */
export async function freePort(): Promise<number> {
  for (let port = FIRST; port <= LAST; port++) {
    if (taken.has(port)) continue;
    if ((await canBind(port)) && (await canBind(port + 10_000))) {
      taken.add(port);
      return port;
    }
  }
  throw new Error(`no free port in ${FIRST}-${LAST} for a private redis-server`);
}

/** Gives a port back once its server has exited. */
export function returnPort(port: number): void {
  taken.delete(port);
}
