import { once } from 'node:events';
import { createConnection, createServer, type Socket } from 'node:net';

/** Client-to-server traffic counted by the proxy. */
export interface PgTraffic {
  /**
   * Times the client waited on the server: a burst of messages holding a `Query`, `Sync` or `Flush`
   * that the client sent after the server last spoke. Pipelined requests written together are one.
   */
  readonly roundTrips: number;
  /** Requests sent, waited on or pipelined: simple `Query` messages plus extended-protocol `Sync` messages. */
  readonly requests: number;
  /** Statements sent: simple `Query` messages plus extended-protocol `Execute` messages. */
  readonly statements: number;
}

/** A loopback TCP proxy in front of PostgreSQL that counts protocol messages. */
export interface PgRoundTripProxy {
  /** Connection string that routes through the proxy. */
  readonly url: string;
  /** Counts since the proxy started. */
  traffic(): PgTraffic;
  close(): Promise<void>;
}

/**
 * Parses PostgreSQL frontend messages as they stream by. The first message of a connection is the
 * untyped startup packet (or an SSL/GSS request followed by one); every later message is a type
 * byte, then a 4-byte length that includes itself.
 */
export function frontendMessageCounter(onMessage: (type: string) => void): (chunk: Buffer) => void {
  let buffered: Buffer = Buffer.alloc(0);
  let startup = true;
  return (chunk) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    for (;;) {
      if (startup) {
        if (buffered.length < 8) return;
        const length = buffered.readInt32BE(0);
        if (buffered.length < length) return;
        const code = buffered.readInt32BE(4);
        buffered = buffered.subarray(length);
        // 80877103 = SSLRequest, 80877104 = GSSENCRequest: the real startup packet follows.
        if (code !== 80877103 && code !== 80877104) startup = false;
        continue;
      }
      if (buffered.length < 5) return;
      const length = buffered.readInt32BE(1);
      if (buffered.length < length + 1) return;
      onMessage(String.fromCharCode(buffered[0]!));
      buffered = buffered.subarray(length + 1);
    }
  };
}

/**
 * Starts a proxy on `listenPort` (0 picks a free port) forwarding to the server named in
 * `targetUrl`. It counts on a real socket, so it sees exactly what the driver sends.
 */
export async function startPgRoundTripProxy(targetUrl: string, listenPort = 0): Promise<PgRoundTripProxy> {
  const target = new URL(targetUrl);
  const targetHost = target.hostname || '127.0.0.1';
  const targetPort = Number(target.port || 5432);
  let roundTrips = 0;
  let requests = 0;
  let statements = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection({ host: targetHost, port: targetPort });
    sockets.add(client);
    sockets.add(upstream);
    // Whether the server has spoken since the client last waited: the next request starts a round trip.
    let answered = true;
    const waited = () => {
      if (answered) roundTrips++;
      answered = false;
    };
    const count = frontendMessageCounter((type) => {
      if (type === 'Q') {
        waited();
        requests++;
        statements++;
      } else if (type === 'S') {
        waited();
        requests++;
      } else if (type === 'H') {
        waited();
      } else if (type === 'E') {
        statements++;
      }
    });
    upstream.on('data', () => {
      answered = true;
    });
    client.on('data', (chunk: Buffer) => {
      count(chunk);
      upstream.write(chunk);
    });
    upstream.pipe(client);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
  });
  server.listen(listenPort, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('pg round-trip proxy: no TCP address');
  const routed = new URL(targetUrl);
  routed.hostname = '127.0.0.1';
  routed.port = String(address.port);
  return {
    url: routed.toString(),
    traffic: () => ({ roundTrips, requests, statements }),
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
