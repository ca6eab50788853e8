import { createServer } from 'node:net';

/**
 * Where private test servers listen: below Linux's ephemeral range (32768–60999). A port in that
 * range may be held at any moment by one of the machine's outgoing connections as its local port,
 * and a server started on it then dies at boot with EADDRINUSE (a private RabbitMQ node on 55370
 * never came up in a CI run; a client socket holding that port reproduces it).
 */
export const PRIVATE_PORTS = { httpStorms: 31200, nats: 31300, rabbitmq: 31360, postgres: 31432, bench: 31500 } as const;

/** Whether a server could listen on 127.0.0.1:`port` now. */
export const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });

/**
 * The first port of `first`…`first + count - 1` at which `width` consecutive ports can be listened
 * on now (a bind, not a connect: a port held by a client socket refuses a connection yet cannot be
 * listened on either) and which `accept`, when given, takes too.
 */
export async function listenablePort(
  first: number,
  count: number,
  width = 1,
  accept?: (port: number) => boolean | Promise<boolean>,
): Promise<number> {
  for (let port = first; port + width <= first + count; port++) {
    let free = true;
    for (let i = 0; i < width && free; i++) free = await canListen(port + i);
    if (free && (accept === undefined || (await accept(port)))) return port;
  }
  throw new Error(`no ${width} listenable port(s) in ${first}-${first + count - 1}`);
}
