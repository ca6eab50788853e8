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

/** The methods a capture takes over. */
const METHODS = ['writeHead', 'write', 'end', 'flushHeaders'] as const;
type Patched = Record<(typeof METHODS)[number], unknown>;

function toBytes(chunk: Chunk, encoding: unknown): Uint8Array {
  return typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : chunk;
}

/** An encoding argument under which Node writes a string as UTF-8. */
const isUtf8 = (encoding: unknown) => typeof encoding !== 'string' || encoding === 'utf8' || encoding === 'utf-8';

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
  // Joined once, when the handler ends (a copy: the handler may reuse its buffers): the same bytes are stored and sent; a body that is one UTF-8 string stays that string.
  body: Buffer | string | undefined;
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
      this.body ??= Buffer.concat(this.chunks);
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
    if (!this.settled && (typeof chunk === 'string' || chunk instanceof Uint8Array)) {
      // One UTF-8 string is the whole body (`res.json`, `res.send`): held as it is, never turned into bytes and back.
      if (typeof chunk === 'string' && this.chunks.length === 0 && isUtf8(encoding)) this.body = chunk;
      else this.chunks.push(toBytes(chunk, encoding));
    }
    this.settle(streaming(this.res) ? 'streaming' : 'complete');
    return this.res;
  }

  // Headers leave with the buffered body; flushing them early would send a response not yet recorded.
  flushHeaders(): void {}

  sendOriginal(): void {
    const { res } = this;
    const body = (this.body ??= Buffer.concat(this.chunks));
    if (!res.hasHeader('content-length') && !res.hasHeader('transfer-encoding')) {
      res.setHeader('content-length', typeof body === 'string' ? Buffer.byteLength(body) : body.length);
    }
    const { callbacks } = this;
    res.end(body, callbacks.length === 0 ? undefined : () => {
      for (const callback of callbacks) callback();
    });
  }
}

/** The capture each held response's writes go to, found by the response: a property or a swapped prototype per response changed its shape, which cost Node's own code on every later access. */
const captures = new WeakMap<object, Capture>();

/**
 * Members for `proto` that hand each call to the response's capture while it has one, and otherwise
 * to what `proto` inherits, looked up at the call (light-my-request re-parents Express's response
 * prototype on every inject).
 */
function forwardingMembers(proto: object): Patched {
  const members = {} as Record<(typeof METHODS)[number], (this: Response, ...args: unknown[]) => unknown>;
  for (const name of METHODS) {
    members[name] = function (this: Response, ...args: unknown[]) {
      const capture = captures.get(this);
      if (capture !== undefined) return (capture[name] as (...args: unknown[]) => unknown)(...args);
      return (Object.getPrototypeOf(proto) as Record<string, (...args: unknown[]) => unknown>)[name]!.apply(this, args);
    };
  }
  return members;
}

/** The forwarding members each response prototype (Express's `app.response`, one per app) was given, or null where it could not take them. */
const forwarding = new WeakMap<object, Patched | null>();

/**
 * Gives `proto` the forwarding members as its own, once, so every response of that app can be held
 * without being touched; the prototype chain stays as it was. Not when `proto` has one of the
 * methods already or cannot be changed (null): then each response gets own patches.
 */
function forwardersOf(proto: object): Patched | null {
  let members = forwarding.get(proto);
  if (members === undefined) {
    members = Object.isExtensible(proto) && !METHODS.some((name) => Object.hasOwn(proto, name)) ? forwardingMembers(proto) : null;
    if (members) {
      for (const name of METHODS) Object.defineProperty(proto, name, { configurable: true, writable: true, value: members[name] });
    }
    forwarding.set(proto, members);
  }
  return members;
}

/** Whether every method `res` answers with is the forwarding one: nothing own on `res`, nothing put over them since. */
const forwardedBy = (res: Response, members: Patched | null) =>
  members !== null && METHODS.every((name) => (res as unknown as Patched)[name] === members[name]);

/**
 * Takes over `writeHead`, `write`, `end` and `flushHeaders` of one response so that everything the
 * handler sends (`res.status().json()`, `res.send`, `res.write` chunks, a piped stream, `res.end`) is
 * buffered with its status and headers, faithfully, instead of reaching the client. The response
 * itself is left as it is: its app's response prototype gets, once, members that hand each call to
 * the response's capture while it has one (see {@link forwardersOf}); a prototype swapped or a property
 * added per response made Node's own code slower on every later access to it. A response whose
 * methods are already own properties (compression, on-headers) gets own patches over them instead,
 * since those would hide the prototype's.
 */
export function captureResponse(res: Response): ResponseCapture {
  const capture = new Capture(res);
  const patched = res as unknown as Patched;
  if (forwardedBy(res, forwardersOf(Object.getPrototypeOf(res) as object))) {
    // A capture of the same response further out (a second expressIdempotency) holds it again once this one is done.
    const outer = captures.get(res);
    captures.set(res, capture);
    capture.restore = () => {
      if (outer === undefined) captures.delete(res);
      else captures.set(res, outer);
    };
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
