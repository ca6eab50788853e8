import { connect, createServer, type Server, type Socket } from 'node:net';

// A TCP proxy between the driver and a server (a real MongoDB, or a scripted one) that can destroy
// every connection it carries on a timer: a connection storm made of real socket resets. It listens on
// the private port range this package's storm tests use (25000-25999).

/** A running proxy. */
export interface StormProxy {
  /** The port the driver connects to. */
  readonly port: number;
  /** Destroys every carried connection now and then every `everyMs`, until {@link StormProxy.calm}. */
  storm(everyMs: number): void;
  /** Stops destroying connections. */
  calm(): void;
  /** Connections destroyed so far. */
  readonly destroyed: number;
  close(): Promise<void>;
}

const FIRST_PORT = 25_000;
const PORTS = 1_000;

/** Listens on a free port of the private range. */
async function listenInRange(server: Server): Promise<number> {
  const start = Math.floor(Math.random() * PORTS);
  for (let i = 0; i < PORTS; i++) {
    const port = FIRST_PORT + ((start + i) % PORTS);
    const listening = await new Promise<boolean>((resolve) => {
      const onError = () => resolve(false);
      server.once('error', onError);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', onError);
        resolve(true);
      });
    });
    if (listening) return port;
  }
  throw new Error('storm proxy: no free port in 25000-25999');
}

/** Starts a proxy to `host:port`. */
export async function stormProxy(target: { host: string; port: number }): Promise<StormProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let destroyed = 0;
  let timer: NodeJS.Timeout | undefined;
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    // The proxy's own sockets: their errors are the storm's doing, not the driver's to report.
    for (const socket of pair) socket.on('error', () => undefined);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const port = await listenInRange(server);
  const destroyAll = () => {
    for (const pair of [...pairs]) {
      pairs.delete(pair);
      destroyed++;
      for (const socket of pair) socket.destroy();
    }
  };
  return {
    port,
    storm(everyMs) {
      destroyAll();
      clearInterval(timer);
      timer = setInterval(destroyAll, everyMs);
    },
    calm: () => clearInterval(timer),
    get destroyed() {
      return destroyed;
    },
    close: async () => {
      clearInterval(timer);
      destroyAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
