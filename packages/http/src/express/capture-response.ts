import type { Response } from 'express';
import { type CapturedResponse, isEventStream, normalizeHeaders } from '../contract/captured-response.js';

/** A response whose writes are held back until the contract has recorded the outcome. */
export interface ResponseCapture {
  /** Resolves when the handler ends the response (or starts a server-sent event stream). */
  readonly done: Promise<CapturedResponse>;
  /** Gives the response its own methods back; call before writing anything for real. */
  restore(): void;
  /** Sends the captured response as the handler produced it (after {@link restore}). */
  sendOriginal(): void;
}

type Chunk = string | Uint8Array;
type Callback = (error?: Error | null) => void;

function toBytes(chunk: Chunk, encoding: unknown): Uint8Array {
  return typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : chunk;
}

/** Copies headers given to `writeHead` (an object, or a flat `[name, value, ...]` list) onto the response. */
function applyHeaders(res: Response, headers: unknown): void {
  if (Array.isArray(headers)) {
    for (let index = 0; index + 1 < headers.length; index += 2) res.setHeader(String(headers[index]), headers[index + 1]);
  } else if (headers && typeof headers === 'object') {
    for (const [name, value] of Object.entries(headers)) if (value !== undefined) res.setHeader(name, value);
  }
}

/**
 * Replaces `writeHead`, `write`, `end` and `flushHeaders` on one response so that everything the
 * handler sends (`res.status().json()`, `res.send`, `res.write` chunks, a piped stream, `res.end`) is
 * buffered with its status and headers, faithfully, instead of reaching the client.
 */
export function captureResponse(res: Response): ResponseCapture {
  const originals = { writeHead: res.writeHead, write: res.write, end: res.end, flushHeaders: res.flushHeaders };
  const chunks: Uint8Array[] = [];
  const callbacks: Callback[] = [];
  let settled = false;
  // Joined once, when the handler ends: the same bytes are stored and sent.
  let body: Buffer | undefined;
  let resolve!: (captured: CapturedResponse) => void;
  // Only the handler ending its response settles this: a client that went away does not, so the
  // outcome is still stored and the client's retry replays it instead of running it again.
  const done = new Promise<CapturedResponse>((ok) => {
    resolve = ok;
  });
  const settle = (kind: CapturedResponse['kind']) => {
    if (settled) return;
    settled = true;
    const status = res.statusCode;
    const headers = normalizeHeaders(res.getHeaders());
    if (kind === 'streaming') resolve({ kind, status, headers });
    else {
      body = Buffer.concat(chunks);
      resolve({ kind, status, headers, body });
    }
  };
  const streaming = () => isEventStream(res.getHeader('content-type'));

  const patched = res as unknown as Record<keyof typeof originals, unknown>;
  patched.writeHead = (status: number, reasonOrHeaders?: unknown, headers?: unknown) => {
    res.statusCode = status;
    if (typeof reasonOrHeaders === 'string') res.statusMessage = reasonOrHeaders;
    applyHeaders(res, typeof reasonOrHeaders === 'string' ? headers : reasonOrHeaders);
    return res;
  };
  patched.write = (chunk: Chunk, encoding?: unknown, callback?: Callback) => {
    if (streaming()) {
      settle('streaming');
      return false;
    }
    if (!settled) chunks.push(toBytes(chunk, encoding));
    const written = typeof encoding === 'function' ? (encoding as Callback) : callback;
    if (written) queueMicrotask(() => written());
    return true;
  };
  patched.end = (chunk?: unknown, encoding?: unknown, callback?: Callback) => {
    const finish = (typeof chunk === 'function' ? chunk : typeof encoding === 'function' ? encoding : callback) as Callback | undefined;
    if (finish) callbacks.push(finish);
    if (typeof chunk === 'string' || chunk instanceof Uint8Array) {
      if (!settled) chunks.push(toBytes(chunk, encoding));
    }
    settle(streaming() ? 'streaming' : 'complete');
    return res;
  };
  // Headers leave with the buffered body; flushing them early would send a response not yet recorded.
  patched.flushHeaders = () => undefined;

  return {
    done,
    restore() {
      Object.assign(res, originals);
    },
    sendOriginal() {
      body ??= Buffer.concat(chunks);
      if (!res.hasHeader('content-length') && !res.hasHeader('transfer-encoding')) res.setHeader('content-length', body.length);
      res.end(body, callbacks.length === 0 ? undefined : () => {
        for (const callback of callbacks) callback();
      });
    },
  };
}
