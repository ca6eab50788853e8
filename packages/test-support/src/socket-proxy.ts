import { type AddressInfo, createServer, Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1:`port` (0: any free port) in front of `target`: real sockets a test can cut under a client
 * (`cut()` resets every connection through it, as a dead network or a killed peer would).
 */
export async function socketProxy(port: number, target: { host: string; port: number }) {
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((client) => {
    const upstream = new Socket();
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    // Either side's error or close ends both: the client sees its connection drop.
    for (const socket of pair) {
      socket.on('error', drop);
      socket.on('close', drop);
    }
    upstream.connect(target.port, target.host);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: (scheme: string) => `${scheme}://127.0.0.1:${bound}`,
    /** Resets every connection through the proxy (an RST to the client); resolves how many. */
    cut(): number {
      const cut = pairs.size;
      for (const pair of [...pairs]) {
        pairs.delete(pair);
        pair[0].resetAndDestroy();
        pair[1].destroy();
      }
      return cut;
    },
    async close(): Promise<void> {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
