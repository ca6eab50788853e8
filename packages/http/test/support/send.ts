import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** A response as the tests read it. */
export interface Received {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly text: string;
  json(): unknown;
}

/** What to send: headers go on the wire as given (node:http allows tabs and obs-text in values). */
export interface Outgoing {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: string | Uint8Array;
}

/** Sends one HTTP/1.1 request on a fresh connection. */
export function send(url: string, path: string, outgoing: Outgoing = {}): Promise<Received> {
  return new Promise((resolve, reject) => {
    const length = outgoing.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(outgoing.body)) };
    const request = httpRequest(`${url}${path}`, {
      method: outgoing.method ?? 'POST',
      // An explicit length: node:http would otherwise send a GET body unframed.
      headers: { ...length, ...outgoing.headers } as Record<string, string | string[]>,
      agent: false,
    });
    request.on('error', reject);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const body = Buffer.concat(chunks);
        const text = body.toString('utf8');
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body, text, json: () => JSON.parse(text) });
      });
    });
    request.end(outgoing.body);
  });
}

/** A JSON POST with an idempotency key (sent as given) and a bearer identity `tenant/principal`. */
export function postJson(url: string, path: string, body: unknown, key: string | undefined, identity = 'acme/alice'): Promise<Received> {
  return send(url, path, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${identity}`,
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    body: JSON.stringify(body),
  });
}
