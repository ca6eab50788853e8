import { prototypesInFront } from '../objects/prototypes-in-front.js';
import { unreadBody } from './unread-body.js';

const decoder = new TextDecoder();

/** Marks {@link Held.parsed} empty (`undefined` is a value a body can't parse to, but keeps the intent plain). */
const NOT_PARSED: unique symbol = Symbol('oncely.notParsed');

/** What a buffered request holds: the bytes read, the content type, and whether its body was used. */
interface Held {
  readonly bytes: Uint8Array;
  readonly contentType: string;
  used: boolean;
  stream: ReadableStream<Uint8Array> | undefined;
  /** The JSON value the contract parsed from `bytes`, handed to the first `json()` instead of parsing again. */
  parsed: unknown;
}

const HELD = Symbol('oncely.bufferedBody');
type Buffered = Request & { [HELD]: Held };

const copy = (held: Held) => held.bytes.slice();

/** Marks the body used first, as every read of a Fetch body does. */
function take(held: Held): void {
  if (held.used || held.stream?.locked) throw new TypeError('Body is unusable: Body has already been read');
  held.used = true;
}

/** A body reader over the held bytes: shared by every buffered request, the bytes found through `this`. */
const reader = <T>(read: (held: Held) => T) =>
  async function (this: Buffered) {
    const held = this[HELD];
    take(held);
    return read(held);
  };

/** The members a buffered request overrides, once for every request (per-request closures cost more than the read). */
const MEMBERS: PropertyDescriptorMap = {
  arrayBuffer: { configurable: true, writable: true, value: reader((held) => copy(held).buffer) },
  bytes: { configurable: true, writable: true, value: reader(copy) },
  text: { configurable: true, writable: true, value: reader((held) => decoder.decode(held.bytes)) },
  json: {
    configurable: true,
    writable: true,
    value: reader((held) => {
      const { parsed } = held;
      if (parsed === NOT_PARSED) return JSON.parse(decoder.decode(held.bytes));
      held.parsed = NOT_PARSED;
      return parsed;
    }),
  },
  blob: { configurable: true, writable: true, value: reader((held) => new Blob([copy(held)], { type: held.contentType })) },
  formData: {
    configurable: true,
    writable: true,
    value: reader((held) => new Response(copy(held), { headers: { 'content-type': held.contentType } }).formData()),
  },
  clone: {
    configurable: true,
    writable: true,
    value: function clone(this: Buffered) {
      const held = this[HELD];
      take(held);
      held.used = false;
      return new Request(this.url, { method: this.method, headers: this.headers, body: copy(held), signal: this.signal });
    },
  },
  bodyUsed: {
    configurable: true,
    get(this: Buffered) {
      const held = this[HELD];
      return held.used || (held.stream?.locked ?? false);
    },
  },
  body: {
    configurable: true,
    get(this: Buffered) {
      const held = this[HELD];
      return (held.stream ??= new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(copy(held));
          controller.close();
        },
      }));
    },
  },
};

/** One prototype per request class (Request, NextRequest...): the class's own, with {@link MEMBERS} in front. */
const bufferedPrototype = prototypesInFront(MEMBERS);

/**
 * Reads a request's body once and hands the same object its body back: `arrayBuffer`, `bytes`,
 * `text`, `json`, `blob`, `formData`, `body`, `bodyUsed` and `clone` serve the bytes read, each read
 * once as the Fetch standard allows. The handler keeps the very object it was given (a `NextRequest`
 * stays one and an instance of its class, its other members untouched): its prototype becomes one that
 * puts these members in front of its class's. Nothing tees the stream: `request.clone()` on Node costs
 * more than the rest of the contract together. A `clone()` of the handler's is a plain `Request`.
 * A body built from a string or bytes and not read yet is taken from where the runtime keeps it
 * ({@link unreadBody}) instead of being read through its stream.
 */
export async function bufferBody(request: Request): Promise<Uint8Array> {
  return holdBody(request, unreadBody(request) ?? new Uint8Array(await request.arrayBuffer()));
}

/** {@link bufferBody} for bytes already taken: the request serves `bytes` from now on. */
export function holdBody(request: Request, bytes: Uint8Array): Uint8Array {
  const held: Held = { bytes, contentType: request.headers.get('content-type') ?? '', used: false, stream: undefined, parsed: NOT_PARSED };
  (request as Buffered)[HELD] = held;
  Object.setPrototypeOf(request, bufferedPrototype(Object.getPrototypeOf(request) as object));
  return bytes;
}

/**
 * Hands `value`, the JSON the contract parsed from a buffered request's bytes, to that request's
 * first `json()`, which then returns it instead of parsing the same bytes again (a second read
 * still fails, as the Fetch standard wants). Only for a value nothing else holds: `validate` may keep one.
 */
export function handOverJson(request: Request, value: unknown): void {
  const held = (request as Partial<Buffered>)[HELD];
  if (held) held.parsed = value;
}
