import { canListen } from '@oncely/test-support';

/** This package's private port range for extra redis-server processes (the shared one is 6379). */
const FIRST = 7000;
const LAST = 7099;
const taken = new Set<number>();

/** A port of the private range that is free, and whose cluster bus port (+10000) is free too. */
export async function freePort(): Promise<number> {
  for (let port = FIRST; port <= LAST; port++) {
    if (taken.has(port)) continue;
    if ((await canListen(port)) && (await canListen(port + 10_000))) {
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
