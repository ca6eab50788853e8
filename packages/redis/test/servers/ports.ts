import { canListen, listenablePort } from '@oncely/test-support';

/** This package's private port range for extra redis-server processes (the shared one is 6379). */
const FIRST = 7000;
const COUNT = 100;
const taken = new Set<number>();

/** A port of the private range that is free, and whose cluster bus port (+10000) is free too. */
export async function freePort(): Promise<number> {
  const port = await listenablePort(FIRST, COUNT, 1, async (port) => !taken.has(port) && (await canListen(port + 10_000)));
  taken.add(port);
  return port;
}

/** Gives a port back once its server has exited. */
export function returnPort(port: number): void {
  taken.delete(port);
}
