import type { Response } from 'express';
import { type CapturedResponse, isEventStream, normalizeHeaders } from '../contract/captured-response.js';
import { prototypesInFront } from '../objects/prototypes-in-front.js';

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

/** The methods a capture takes over. */
const METHODS = ['writeHead', 'write', 'end', 'flushHeaders'] as const;
type Patched = Record<(typeof METHODS)[number], unknown>;

const CAPTURE = Symbol('oncely.responseCapture');
type Captured = Response & { [CAPTURE]: Capture };

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

const streaming = (res: Response) => isEventStream(res.getHeader('content-type'));

/** One response's capture: what the handler wrote, and how to undo the takeover. */
class Capture implements ResponseCapture {
  readonly done: Promise<CapturedResponse>;
  readonly chunks: Uint8Array[] = [];
  readonly callbacks: Callback[] = [];
  settled = false;
  // Joined once, when the handler ends: the same bytes are stored and sent.
  body: Buffer | undefined;
  resolve!: (captured: CapturedResponse) => void;
  restore: () => void = () => undefined;

  constructor(readonly res: Response) {
    // Only the handler ending its response settles this: a client that went away does not, so the
    // outcome is still stored and the client's retry replays it instead of running it again.
    this.done = new Promise<CapturedResponse>((ok) => {
      this.resolve = ok;
    });
  }

  settle(kind: CapturedResponse['kind']): void {
    if (this.settled) return;
    this.settled = true;
    const { res } = this;
    const status = res.statusCode;
    const headers = normalizeHeaders(res.getHeaders());
    if (kind === 'streaming') this.resolve({ kind, status, headers });
    else {
      this.body = Buffer.concat(this.chunks);
      this.resolve({ kind, status, headers, body: this.body });
    }
  }

  writeHead(status: number, reasonOrHeaders?: unknown, headers?: unknown): Response {
    const { res } = this;
    res.statusCode = status;
    if (typeof reasonOrHeaders === 'string') res.statusMessage = reasonOrHeaders;
    applyHeaders(res, typeof reasonOrHeaders === 'string' ? headers : reasonOrHeaders);
    return res;
  }

  write(chunk: Chunk, encoding?: unknown, callback?: Callback): boolean {
    if (streaming(this.res)) {
      this.settle('streaming');
      return false;
    }
    if (!this.settled) this.chunks.push(toBytes(chunk, encoding));
    const written = typeof encoding === 'function' ? (encoding as Callback) : callback;
    if (written) queueMicrotask(() => written());
    return true;
  }

  end(chunk?: unknown, encoding?: unknown, callback?: Callback): Response {
    const finish = (typeof chunk === 'function' ? chunk : typeof encoding === 'function' ? encoding : callback) as Callback | undefined;
    if (finish) this.callbacks.push(finish);
    if (typeof chunk === 'string' || chunk instanceof Uint8Array) {
      if (!this.settled) this.chunks.push(toBytes(chunk, encoding));
    }
    this.settle(streaming(this.res) ? 'streaming' : 'complete');
    return this.res;
  }

  sendOriginal(): void {
    const { res } = this;
    const body = (this.body ??= Buffer.concat(this.chunks));
    if (!res.hasHeader('content-length') && !res.hasHeader('transfer-encoding')) res.setHeader('content-length', body.length);
    const { callbacks } = this;
    res.end(body, callbacks.length === 0 ? undefined : () => {
      for (const callback of callbacks) callback();
    });
  }
}

/** The capturing members, once for every response: each finds its capture through `this`. */
const MEMBERS: PropertyDescriptorMap = {
  writeHead: { configurable: true, writable: true, value: function writeHead(this: Captured, ...args: [number, unknown?, unknown?]) {
    return this[CAPTURE].writeHead(...args);
  } },
  write: { configurable: true, writable: true, value: function write(this: Captured, ...args: [Chunk, unknown?, Callback?]) {
    return this[CAPTURE].write(...args);
  } },
  end: { configurable: true, writable: true, value: function end(this: Captured, ...args: [unknown?, unknown?, Callback?]) {
    return this[CAPTURE].end(...args);
  } },
  // Headers leave with the buffered body; flushing them early would send a response not yet recorded.
  flushHeaders: { configurable: true, writable: true, value: () => undefined },
};

/** One capturing prototype per response prototype (Express's `app.response`): its own, with {@link MEMBERS} in front. */
const capturingPrototype = prototypesInFront(MEMBERS);

/**
 * Takes over `writeHead`, `write`, `end` and `flushHeaders` of one response so that everything the
 * handler sends (`res.status().json()`, `res.send`, `res.write` chunks, a piped stream, `res.end`) is
 * buffered with its status and headers, faithfully, instead of reaching the client. The response's
 * prototype is swapped for one with capturing members in front (as Express itself sets it per
 * request): four own closures per request made every response a new shape, costlier than the
 * capture. A response whose methods are already own properties (compression, on-headers) gets
 * own patches over them instead, since those would hide the prototype's.
 */
export function captureResponse(res: Response): ResponseCapture {
  const capture = new Capture(res);
  const patched = res as unknown as Patched;
  if (!METHODS.some((name) => Object.hasOwn(res, name))) {
    const proto = Object.getPrototypeOf(res) as object;
    (res as Captured)[CAPTURE] = capture;
    Object.setPrototypeOf(res, capturingPrototype(proto));
    capture.restore = () => Object.setPrototypeOf(res, proto);
    return capture;
  }
  const originals: Patched = { writeHead: patched.writeHead, write: patched.write, end: patched.end, flushHeaders: patched.flushHeaders };
  const owned = METHODS.filter((name) => Object.hasOwn(res, name));
  patched.writeHead = (status: number, reasonOrHeaders?: unknown, headers?: unknown) => capture.writeHead(status, reasonOrHeaders, headers);
  patched.write = (chunk: Chunk, encoding?: unknown, callback?: Callback) => capture.write(chunk, encoding, callback);
  patched.end = (chunk?: unknown, encoding?: unknown, callback?: Callback) => capture.end(chunk, encoding, callback);
  patched.flushHeaders = () => undefined;
  capture.restore = () => {
    // What was inherited is inherited again; what was the response's own is put back.
    for (const name of METHODS) {
      if (owned.includes(name)) patched[name] = originals[name];
      else delete patched[name];
    }
  };
  return capture;
}
