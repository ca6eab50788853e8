import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';

/**
 * What the proxy does with one `POST /v1/payments`: `forward` it; `drop-answer`: forward it, wait for
 * the whole answer (the charge committed), then close the browser's connection without a byte of it;
 * `refuse`: close the connection without forwarding (the network is down); `delay`: forward it after
 * `ms`, even if the browser has gone by then (a request still on its way).
 */
export type PaymentFate = 'forward' | 'drop-answer' | 'refuse' | { readonly delayMs: number };

/** One payment request the proxy saw. */
export interface SeenPayment {
  /** The `Idempotency-Key` field as sent (the IETF profile quotes it). */
  readonly key: string | undefined;
  readonly fate: string;
  /** When it arrived, ms since the epoch. */
  readonly at: number;
  /** The service's answer, once it came (whether or not the browser got it). */
  status?: number;
  replayed?: boolean;
}

/** A proxy between Chromium and the demo host that decides the fate of each payment request. */
export interface FaultProxy {
  readonly url: string;
  readonly payments: SeenPayment[];
  /** Decides the fate of the n-th payment request (0-based); default: forward everything. */
  fate: (index: number) => PaymentFate;
  /** Resolves when every forwarded payment has its answer. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the proxy on `port`, in front of `target` (the demo host's URL). */
export async function startFaultProxy(target: string, port: number): Promise<FaultProxy> {
  const pending = new Set<Promise<void>>();
  const proxy: FaultProxy = {
    url: `http://127.0.0.1:${port}`,
    payments: [],
    fate: () => 'forward',
    async settled() {
      while (pending.size > 0) await Promise.all(pending);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (request.method !== 'POST' || request.url !== '/v1/payments') {
      void forward(request, body).then((answer) => reply(response, answer), () => response.destroy());
      return;
    }
    const fate = proxy.fate(proxy.payments.length);
    const seen: SeenPayment = {
      key: request.headers['idempotency-key'] as string | undefined,
      fate: typeof fate === 'string' ? fate : `delay ${fate.delayMs} ms`,
      at: Date.now(),
    };
    proxy.payments.push(seen);
    if (fate === 'refuse') {
      request.socket.destroy();
      return;
    }
    const done = (async () => {
      if (typeof fate === 'object') await new Promise((resolve) => setTimeout(resolve, fate.delayMs));
      const answer = await forward(request, body).catch(() => undefined);
      seen.status = answer?.status;
      seen.replayed = answer?.headers['idempotent-replayed'] === 'true';
      if (!answer || fate === 'drop-answer') request.socket.destroy();
      else reply(response, answer);
    })();
    pending.add(done);
    void done.finally(() => pending.delete(done));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return proxy;

  /** Sends the request on to the host and reads its whole answer. */
  function forward(request: IncomingMessage, body: Buffer): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const headers = { ...request.headers, host: new URL(target).host, 'content-length': String(body.length) };
      delete headers.connection;
      const outgoing = httpRequest(new URL(request.url ?? '/', target), { method: request.method, headers, agent: false }, (incoming) => {
        const parts: Buffer[] = [];
        incoming.on('data', (part: Buffer) => parts.push(part));
        incoming.on('error', reject);
        incoming.on('end', () => {
          const flat: Record<string, string> = {};
          for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === 'string') flat[name] = value;
          resolve({ status: incoming.statusCode ?? 502, headers: flat, body: Buffer.concat(parts) });
        });
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }
}

/** Writes an answer back to the browser, on a connection closed afterwards. */
function reply(response: ServerResponse, answer: { status: number; headers: Record<string, string>; body: Buffer }): void {
  if (response.destroyed) return;
  const headers = { ...answer.headers, connection: 'close', 'content-length': String(answer.body.length) };
  delete (headers as Record<string, string>)['transfer-encoding'];
  response.writeHead(answer.status, headers);
  response.end(answer.body);
}
