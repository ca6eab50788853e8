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

/** Options of {@link reachableAs}. */
export interface ReachableAsOptions {
  /** Port to probe when the URL names none. */
  readonly defaultPort?: number;
  /** Asked between probes: throws (or rejects) to give up at once, say when the server already died. */
  readonly failFast?: () => void | Promise<void>;
}

/** Waits until `url` answers (`up`) or stops answering; fails after `timeoutMs`, or as soon as `failFast` throws. */
export async function reachableAs(url: string, up: boolean, timeoutMs: number, options: ReachableAsOptions = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await reachable(url, options.defaultPort)) !== up) {
    await options.failFast?.();
    if (Date.now() > deadline) throw new Error(`${url} still ${up ? 'down' : 'up'} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
