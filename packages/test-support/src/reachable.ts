import { createConnection } from 'node:net';

/** True when something answers on the host and port of `url` (`defaultPort` when the URL names none). */
export function reachable(url: string, defaultPort?: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port || defaultPort) });
    socket.setTimeout(2_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Waits until `url` answers (`up`) or stops answering; fails after `timeoutMs`. */
export async function reachableAs(url: string, up: boolean, timeoutMs: number, defaultPort?: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await reachable(url, defaultPort)) !== up) {
    if (Date.now() > deadline) throw new Error(`${url} still ${up ? 'down' : 'up'} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
