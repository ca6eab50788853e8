import { request as httpRequest } from 'node:http';

/** One HTTP exchange with the service, as a client experiences it. */
export type Exchange =
  | {
      readonly kind: 'answered';
      readonly status: number;
      readonly headers: Readonly<Record<string, string>>;
      readonly body: unknown;
      /** When the request was sent, ms since the epoch. */
      readonly sentAt: number;
    }
  /** The connection closed (a crash, a dropped response) or timed out before any answer. */
  | { readonly kind: 'no_answer'; readonly error: NodeJS.ErrnoException; readonly sentAt: number };

/** What to send. */
export interface ApiRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** `tenant:principal`, sent as `Authorization: Bearer …`. */
  readonly caller?: string;
  readonly key?: string;
  readonly body?: unknown;
  /** `Oncely-Fault` header value. */
  readonly fault?: string;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * Sends one request on a fresh connection (no keep-alive: a killed service must not leave a pooled
 * socket behind) and reports what came back, or that nothing did.
 */
export function exchange(baseUrl: string, request: ApiRequest): Promise<Exchange> {
  const url = new URL(request.path, baseUrl);
  const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
  const headers: Record<string, string> = { accept: 'application/json' };
  if (payload) headers['content-type'] = 'application/json';
  if (request.caller) headers.authorization = `Bearer ${request.caller}`;
  if (request.key) headers['idempotency-key'] = request.key;
  if (request.fault) headers['oncely-fault'] = request.fault;
  const sentAt = Date.now();
  return new Promise((resolve) => {
    const outgoing = httpRequest(
      url,
      { method: request.method, headers, agent: false, timeout: request.timeoutMs ?? 30_000, signal: request.signal },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', (error) => resolve({ kind: 'no_answer', error, sentAt }));
        incoming.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = text.length > 0 ? JSON.parse(text) : undefined;
          } catch {
            // Not JSON: keep the text.
          }
          const flat: Record<string, string> = {};
          for (const [name, value] of Object.entries(incoming.headers)) {
            if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
          }
          resolve({ kind: 'answered', status: incoming.statusCode ?? 0, headers: flat, body, sentAt });
        });
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(Object.assign(new Error('request timed out'), { code: 'ETIMEDOUT' })));
    outgoing.on('error', (error) => resolve({ kind: 'no_answer', error, sentAt }));
    outgoing.end(payload);
  });
}
